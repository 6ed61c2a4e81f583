/**
 * The hosted service's constructs that have no counterpart here yet. Each one made is a problem
 * of the project, naming the file, the construct and what to do (never a crash, never left out
 * silently): the loader reports it with the construct's file and line.
 */
import type { ResourceKind } from '../../src/resources/types.js'
import { Construct } from '../construct.js'
import { GUIDE, Ref, attachNotes, type Props } from './support.js'
import { PhysicalRef } from './translate.js'

/** The kind of a construct that stands for a problem: no resource of this project. */
const UNMAPPED = 'unmapped' as ResourceKind

/** A construct that is only a problem: `name`'s `message`. */
export class Unmapped extends Construct<Props> {
  constructor(name: string, logicalId: unknown, message: string, props: Props = {}) {
    super(UNMAPPED, name, typeof logicalId === 'string' ? logicalId : String(logicalId), props)
    attachNotes(this, [{ level: 'problem', message }])
  }

  ref(): Ref {
    return Ref.to(this)
  }
}

/** A class of the hosted CLI with no counterpart: `new X(id, props)` is the problem `advice` says. */
function unsupported(name: string, advice: string) {
  const message = `has no counterpart in monitors yet, so this project cannot be applied with it: ${advice}; remove it (or keep it in a project of the hosted service of its own). See ${GUIDE}#what-does-not-map`
  const Class = class extends Unmapped {
    constructor(logicalId: string, props?: unknown) {
      super(name, logicalId, message, typeof props === 'object' && props !== null ? (props as Props) : {})
    }

    static fromId(id: number | string): PhysicalRef {
      return new PhysicalRef(`${name}Ref`, id)
    }
  }
  Object.defineProperty(Class, 'name', { value: name })
  return Class
}

export const AgenticCheck = unsupported('AgenticCheck', `an agent-written check runs only on the hosted service: write the flow as a BrowserCheck`)
export const Dashboard = unsupported('Dashboard', `the server's own dashboard (/dashboard) shows every check`)
export const StatusPageV3 = unsupported('StatusPageV3', `use StatusPage with cards of StatusPageService, which checks open incidents on (triggerIncident)`)
export const StatusPageV3Component = unsupported('StatusPageV3Component', `use a StatusPageService in a StatusPage card`)
export const StatusPageV3AutomationRule = unsupported('StatusPageV3AutomationRule', `a check opens and resolves incidents itself here (triggerIncident)`)
export const SslMonitor = unsupported(
  'SslMonitor',
  `an ApiCheck or UrlMonitor of the site reads its certificate, and alert channels with sslExpiry: true alert before it expires`,
)
export const GrpcMonitor = unsupported('GrpcMonitor', `a TcpMonitor of the port checks that it answers`)
export const TracerouteMonitor = unsupported('TracerouteMonitor', `an IcmpMonitor of the host checks its reachability and latency`)
export const PrivateLocationCheckAssignment = unsupported('PrivateLocationCheckAssignment', `name the location in the check's privateLocations: [location]`)
export const PrivateLocationGroupAssignment = unsupported('PrivateLocationGroupAssignment', `name the location in the group's privateLocations: [location]`)
export const PhoneCallAlertChannel = unsupported(
  'PhoneCallAlertChannel',
  `use an SmsAlertChannel, or a PagerdutyAlertChannel or OpsgenieAlertChannel that calls`,
)
export const SlackAppAlertChannel = unsupported('SlackAppAlertChannel', `use a SlackAlertChannel with an incoming webhook URL of the channel`)
export const TelegramAlertChannel = unsupported('TelegramAlertChannel', `its bot token would be part of a webhook URL, which plans show: use another channel`)

/** References to resources of the kinds above (`StatusPageV3.fromId(...)` and the like). */
export const StatusPageV3Ref = PhysicalRef
export const StatusPageV3ComponentRef = PhysicalRef

/** The engine of a PlaywrightCheck (`Engine.node('24')`): not used here (a warning on the check). */
export class Engine {
  private constructor(
    readonly name: string,
    readonly version: string,
  ) {}
  static node(version: string): Engine {
    return new Engine('node', version)
  }
  static bun(version: string): Engine {
    return new Engine('bun', version)
  }
}

/** The SSL monitor's vocabularies, so that a file naming them loads (the SslMonitor itself is reported). */
const names = () => new Proxy({}, { get: (_t, name) => String(name) }) as Record<string, string>
export const TlsVersion = names()
export const CipherSuite = names()
export const SignatureAlgorithm = names()
