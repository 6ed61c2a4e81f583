import { Construct, type ConstructOptions } from './construct.js'

export interface PrivateLocationProps extends ConstructOptions {
  /**
   * Name shown beside the location's runs, 1-200 characters.
   * @example name: 'Office'
   */
  name: string
  /**
   * The location's slug: what checks and groups name it by, what `monitors agent --locations`
   * serves and what results show as their location. 1-30 letters, digits and hyphens, never a
   * public location's name; it never changes (another slug is another location).
   * @example slugName: 'office'
   */
  slugName: string
  /** An icon of the dashboard's. @defaultValue 'location' */
  icon?: string
  /**
   * A proxy for the HTTP requests of API checks run there (the hosted service's field; kept as given).
   * @example proxyUrl: 'http://proxy.office.internal:3128'
   */
  proxyUrl?: string | null
}

/**
 * A private location: a named location of the account that only its own agents serve
 * (`monitors agent --locations office` with a key of the location). Checks and groups run there
 * by naming the construct in `privateLocations`.
 *
 * @example
 * const office = new PrivateLocation('office', { name: 'Office', slugName: 'office' })
 * new DnsCheck('intranet', { name: 'Intranet', privateLocations: [office], request: { query: 'intranet.example.com' } })
 */
export class PrivateLocation extends Construct<PrivateLocationProps> {
  /**
   * @param logicalId id of the location in code, unique among private locations: letters, digits and `_ - / # .`
   * @param props the location's name, slug, icon and proxy
   */
  constructor(logicalId: string, props: PrivateLocationProps) {
    super('private-location', 'PrivateLocation', logicalId, props)
  }
}
