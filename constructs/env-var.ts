import { Construct, type ConstructOptions } from './construct.js'

export interface EnvVarProps extends ConstructOptions {
  /**
   * The value. Read it from the environment rather than writing secrets into code.
   * @example value: process.env.API_TOKEN ?? ''
   */
  value: string
  /**
   * Hide the value in the dashboard like a password.
   * @defaultValue false
   */
  locked?: boolean
  /**
   * Never return the value again: reads answer an empty string. Once true it cannot go
   * back to false. monitors never prints it.
   * @defaultValue false
   */
  secret?: boolean
}

/**
 * An environment variable of the account, available to check runs. Its logical id is its key.
 *
 * @example
 * new EnvVar('API_TOKEN', { value: process.env.API_TOKEN ?? '', secret: true })
 */
export class EnvVar extends Construct<EnvVarProps> {
  /**
   * @param key the variable's name, also its logical id: 1-128 characters of A-Z, a-z, 0-9 and _, not starting with a digit. It cannot change.
   * @param props the value and flags
   */
  constructor(key: string, props: EnvVarProps) {
    super('variable', 'EnvVar', key, props)
  }

  /** The variable's name (same as the logical id). */
  get key(): string {
    return this.logicalId
  }
}
