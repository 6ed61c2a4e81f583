import { Construct, type ConstructOptions } from './construct.js'

export interface StatusPageServiceProps extends ConstructOptions {
  /**
   * Name shown on status pages and incidents, 1-200 characters.
   * @example name: 'Checkout'
   */
  name: string
}

/**
 * A service shown on status pages, for example "Checkout". Status page cards and checks'
 * `triggerIncident` refer to it by passing the construct itself.
 *
 * @example
 * const checkout = new StatusPageService('checkout', { name: 'Checkout' })
 */
export class StatusPageService extends Construct<StatusPageServiceProps> {
  /**
   * @param logicalId id of the service in code, unique among services: letters, digits and `_ - / # .`
   * @param props the service's API fields
   */
  constructor(logicalId: string, props: StatusPageServiceProps) {
    super('status-page-service', 'StatusPageService', logicalId, props)
  }
}
