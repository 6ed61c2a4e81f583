import type { StatusPageInput } from '../src/schema/status-page.js'
import { Construct, type ConstructOptions } from './construct.js'
import type { StatusPageService } from './status-page-service.js'

/** A card of a status page: a titled group of services. */
export interface StatusPageCardProps {
  /**
   * Title of the card.
   * @example name: 'Shop'
   */
  name: string
  /**
   * The services shown on the card: `StatusPageService` constructs of this project.
   * @defaultValue []
   * @example services: [checkout, search]
   */
  services?: StatusPageService[]
}

export interface StatusPageProps extends ConstructOptions {
  /**
   * Title of the page, 1-200 characters.
   * @example name: 'Shop status'
   */
  name: string
  /**
   * The page's slug, unique on the service: lower case a-z, 0-9 and -, 1-63 characters,
   * not starting or ending with -.
   * @example url: 'shop-status'
   */
  url: string
  /** The cards of the page, in order. */
  cards: StatusPageCardProps[]
  /**
   * A domain of yours serving the page at its root (point its DNS at the service): a DNS name
   * such as status.example.com, without scheme, port or path. One page per domain on the whole
   * service, compared without case; never a name of the service itself (the service answers 409).
   * @example customDomain: 'status.example.com'
   */
  customDomain?: string | null
  /** Colours of the light and dark themes (12 fields each). */
  themeColors?: StatusPageInput['themeColors']
  /** URL of the logo. */
  logo?: string | null
  /** Where the logo links to. */
  redirectTo?: string | null
  /** URL of the favicon. */
  favicon?: string | null
  /**
   * LIGHT, DARK or AUTO (follows the visitor's setting).
   * @defaultValue 'AUTO'
   */
  defaultTheme?: StatusPageInput['defaultTheme']
  /**
   * Show each service's response time on the page: the average over the last 24 hours of its
   * checks' runs (the checks whose `triggerIncident` names the service), in ms. An extension of
   * the API, served by `monitors server`.
   * @defaultValue false
   * @example showResponseTime: true
   */
  showResponseTime?: boolean
}

/**
 * A public status page listing services in cards.
 *
 * @example
 * const checkout = new StatusPageService('checkout', { name: 'Checkout' })
 * new StatusPage('public', { name: 'Shop status', url: 'shop-status', cards: [{ name: 'Shop', services: [checkout] }] })
 */
export class StatusPage extends Construct<StatusPageProps> {
  /**
   * @param logicalId id of the page in code, unique among status pages: letters, digits and `_ - / # .`
   * @param props the page's API fields
   */
  constructor(logicalId: string, props: StatusPageProps) {
    super('status-page', 'StatusPage', logicalId, props)
  }
}
