/**
 * The hosted service's status pages (the original ones: cards of services), their services and
 * maintenance windows, as this project's constructs of the same names.
 */
import { HostedConstruct } from './base.js'
import { isObject, type Notes, type Props } from './support.js'
import { PhysicalRef } from './translate.js'
import type { MaintenanceWindowProps, PrivateLocationProps, StatusPageProps, StatusPageServiceProps } from './types.js'

const plain = (given: unknown): { props: Props; notes: Notes } => ({ props: isObject(given) ? { ...given } : {}, notes: [] })

/** A service of status pages, which checks open incidents on (`triggerIncident: { service }`). */
export class StatusPageService extends HostedConstruct {
  constructor(logicalId: string, props: StatusPageServiceProps) {
    super('status-page-service', 'StatusPageService', logicalId, plain(props))
  }

  /** A service not managed in this project, by its id (a status page here shows services of the project only). */
  static fromId(id: string): PhysicalRef {
    return new PhysicalRef('StatusPageServiceRef', id)
  }
}

/** A private location (the hosted CLI's shape: `{ name, slugName, icon?, proxyUrl? }`), which checks and groups name in privateLocations. */
export class PrivateLocation extends HostedConstruct {
  constructor(logicalId: string, props: PrivateLocationProps) {
    super('private-location', 'PrivateLocation', logicalId, plain(props))
  }

  /** A location not managed in this project, by its id: checks here name a location by its slugName instead. */
  static fromId(id: string): PhysicalRef {
    return new PhysicalRef('PrivateLocationRef', id)
  }
}

/** The hosted CLI's name of a reference to a private location (`PrivateLocation.fromId(id)`). */
export const PrivateLocationRef = PhysicalRef

/** The hosted CLI's name of a reference to a service (`StatusPageService.fromId(id)`). */
export const StatusPageServiceRef = PhysicalRef

function statusPageProps(given: unknown): { props: Props; notes: Notes } {
  const { props, notes } = plain(given)
  if (!Array.isArray(props.cards)) return { props, notes }
  props.cards.forEach((card, i) => {
    if (!isObject(card) || !Array.isArray(card.services)) return
    card.services.forEach((service, j) => {
      if (service instanceof PhysicalRef) {
        notes.push({
          level: 'problem',
          field: `cards.${i}.services.${j}`,
          message: `StatusPageService.fromId(${JSON.stringify(service.physicalId)}): a status page here shows services of the project only; declare it with new StatusPageService(...)`,
        })
      }
    })
  })
  return { props, notes }
}

/** A public status page: cards of services. */
export class StatusPage extends HostedConstruct {
  constructor(logicalId: string, props: StatusPageProps) {
    super('status-page', 'StatusPage', logicalId, statusPageProps(props))
  }
}

const iso = (v: unknown) => (v instanceof Date ? (Number.isNaN(v.getTime()) ? 'an invalid date' : v.toISOString()) : v)

/** A maintenance window: the checks with its tags run, but alert no one, while it lasts. */
export class MaintenanceWindow extends HostedConstruct {
  constructor(logicalId: string, props: MaintenanceWindowProps) {
    const { props: out, notes } = plain(props)
    for (const field of ['startsAt', 'endsAt', 'repeatEndsAt']) if (out[field] !== undefined) out[field] = iso(out[field])
    super('maintenance-window', 'MaintenanceWindow', logicalId, { props: out, notes })
  }
}
