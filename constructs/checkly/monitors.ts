/**
 * The hosted service's monitors: `HeartbeatMonitor`, `DnsMonitor`, `TcpMonitor`, `UrlMonitor`,
 * `IcmpMonitor`, each this project's check of that type (HeartbeatCheck, DnsCheck, ...). A
 * monitor does not retry unless its retryStrategy says so: `doubleCheck` is always false.
 */
import { HostedConstruct } from './base.js'
import { isObject, withoutNullRegex, type Notes, type Props } from './support.js'
import { translateCheck } from './translate.js'
import type { DnsMonitorProps, HeartbeatMonitorProps, IcmpMonitorProps, TcpMonitorProps, UrlMonitorProps } from './types.js'

type Mapped = { props: Props; notes: Notes }

/** The request with its assertions' empty `regex` left out; a regex given where this project has none is a problem. */
function requestWithoutRegex(request: unknown, notes: Notes, what: string): unknown {
  if (!isObject(request) || !Array.isArray(request.assertions)) return request
  request.assertions.forEach((a, i) => {
    if (isObject(a) && typeof a.regex === 'string' && a.regex !== '') {
      notes.push({
        level: 'problem',
        field: `request.assertions.${i}.regex`,
        message: `${what} assertions have no regex here: assert on the whole answer (contains, equals) instead`,
      })
    }
  })
  return { ...request, assertions: withoutNullRegex(request.assertions) }
}

function monitorProps(construct: string, given: unknown, request: (rest: Props, props: Props, notes: Notes) => void): Mapped {
  const { props, notes, rest } = translateCheck(construct, given as Props, 'monitor')
  request(rest, props, notes)
  Object.assign(props, rest)
  return { props, notes }
}

/** A heartbeat monitor: passes while a job pings its URL at least once every period (plus grace). */
export class HeartbeatMonitor extends HostedConstruct {
  constructor(logicalId: string, props: HeartbeatMonitorProps) {
    super(
      'heartbeat-check',
      'HeartbeatMonitor',
      logicalId,
      monitorProps('HeartbeatMonitor', props, (rest, out) => {
        const { period, periodUnit, grace, graceUnit } = rest
        delete rest.period
        delete rest.periodUnit
        delete rest.grace
        delete rest.graceUnit
        out.heartbeat = { period, periodUnit, grace, graceUnit }
      }),
    )
  }
}

/** A DNS monitor: a query to a name server, with assertions on the answer. */
export class DnsMonitor extends HostedConstruct {
  constructor(logicalId: string, props: DnsMonitorProps) {
    super(
      'dns-check',
      'DnsMonitor',
      logicalId,
      monitorProps('DnsMonitor', props, (rest, _out, notes) => {
        rest.request = requestWithoutRegex(rest.request, notes, 'DNS')
      }),
    )
  }
}

/** A TCP monitor: a connection to a host and port, with assertions on what it answers. */
export class TcpMonitor extends HostedConstruct {
  constructor(logicalId: string, props: TcpMonitorProps) {
    super(
      'tcp-check',
      'TcpMonitor',
      logicalId,
      monitorProps('TcpMonitor', props, (rest) => {
        // nothing to send is no `data` here (an empty one is refused)
        if (isObject(rest.request) && rest.request.data === '') {
          const { data: _data, ...request } = rest.request
          rest.request = request
        }
      }),
    )
  }
}

/** A URL monitor: a GET of a URL, with assertions on the status code. */
export class UrlMonitor extends HostedConstruct {
  constructor(logicalId: string, props: UrlMonitorProps) {
    super(
      'url-check',
      'UrlMonitor',
      logicalId,
      monitorProps('UrlMonitor', props, (rest) => {
        if (isObject(rest.request) && rest.request.url instanceof URL) rest.request = { ...rest.request, url: rest.request.url.toString() }
      }),
    )
  }
}

/** An ICMP monitor: pings of a host, with assertions on latency and packet loss. */
export class IcmpMonitor extends HostedConstruct {
  constructor(logicalId: string, props: IcmpMonitorProps) {
    super(
      'icmp-check',
      'IcmpMonitor',
      logicalId,
      monitorProps('IcmpMonitor', props, (rest, _out, notes) => {
        const request = requestWithoutRegex(rest.request, notes, 'ICMP')
        // the hosted service's `stdDev` is `stddev` here
        if (isObject(request) && Array.isArray(request.assertions)) {
          request.assertions = request.assertions.map((a) =>
            isObject(a) && a.source === 'LATENCY' && a.property === 'stdDev' ? { ...a, property: 'stddev' } : a,
          )
        }
        rest.request = request
        // fields the API requires of an ICMP check, empty (as IcmpCheck fills them)
        rest.heartbeat ??= {}
        rest.script ??= ''
      }),
    )
  }
}

/** The hosted names of the older releases. */
export { HeartbeatMonitor as HeartbeatCheck, TcpMonitor as TcpCheck }
