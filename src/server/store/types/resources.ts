/** The account's other resources: variables, snippets, maintenance windows, alert channels, incidents. (Re-exported by ../index.ts.) */
import type { AlertChannelData, MaintenanceWindow, Snippet } from '../../../schema/index.js'
import type { JsonBodyStore, KeysetList, Page, Paging, Timestamps } from './paging.js'

export interface VariableRecord extends Timestamps {
  key: string
  value: string
  locked: boolean
  secret: boolean
}

export interface VariableData {
  key: string
  value: string
  locked: boolean
  secret: boolean
}

/** A snippet: a named setup or teardown script of API checks. */
export interface SnippetRecord extends Timestamps {
  id: number
  snippet: Snippet
}

export interface MaintenanceWindowRecord extends Timestamps {
  id: number
  window: MaintenanceWindow
}

/** An account-level alert channel (its configuration stored in clear: deliveries need it). */
export interface AlertChannelRecord extends Timestamps {
  id: number
  channel: AlertChannelData
}

export interface IncidentData {
  name: string
  severity: string
  services: Array<{ id: string }>
  [field: string]: unknown
}

export interface IncidentUpdateRecord extends Timestamps {
  id: string
  update: Record<string, unknown>
}

export interface IncidentRecord extends Timestamps {
  id: string
  incident: IncidentData
  /** newest first */
  updates: IncidentUpdateRecord[]
}

export interface VariableStore extends KeysetList<VariableRecord> {
  list(account: string, paging: Paging): Promise<Page<VariableRecord>>
  get(account: string, key: string): Promise<VariableRecord | undefined>
  /** throws UniqueViolation('variable.key') when the account has the key */
  create(account: string, data: VariableData): Promise<VariableRecord>
  update(account: string, key: string, data: Omit<VariableData, 'key'>): Promise<VariableRecord | undefined>
  delete(account: string, key: string): Promise<boolean>
}

export type MaintenanceWindowStore = JsonBodyStore<number, MaintenanceWindow, MaintenanceWindowRecord>

export type SnippetStore = JsonBodyStore<number, Snippet, SnippetRecord>

export type AlertChannelStore = JsonBodyStore<number, AlertChannelData, AlertChannelRecord>

export interface IncidentStore extends JsonBodyStore<string, IncidentData, IncidentRecord> {
  /** updates of an incident of the account; undefined when the incident is not there */
  addUpdate(account: string, incidentId: string, data: Record<string, unknown>): Promise<IncidentUpdateRecord | undefined>
  getUpdate(account: string, incidentId: string, id: string): Promise<IncidentUpdateRecord | undefined>
  replaceUpdate(account: string, incidentId: string, id: string, data: Record<string, unknown>): Promise<IncidentUpdateRecord | undefined>
  deleteUpdate(account: string, incidentId: string, id: string): Promise<boolean>
}
