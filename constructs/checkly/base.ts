import type { ResourceKind } from '../../src/resources/types.js'
import { Construct, type AnyConstruct } from '../construct.js'
import { Ref, attachNotes, type Notes, type Props } from './support.js'

/**
 * Base of the hosted service's constructs: a construct of this project (its kind, this
 * project's props) under the hosted name, with the notes of what did not map and `ref()`.
 */
export abstract class HostedConstruct extends Construct<Props> {
  protected constructor(kind: ResourceKind, name: string, logicalId: string, mapped: { props: Props; notes: Notes }) {
    super(kind, name, logicalId, mapped.props)
    attachNotes(this, mapped.notes)
  }

  /** A reference to this construct (`groupId: group.ref()`, `alertChannelId: channel.ref()`). */
  ref(): Ref {
    return Ref.to(this as unknown as AnyConstruct)
  }
}
