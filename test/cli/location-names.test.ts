/**
 * One rule for "may this run's location be a private location's slug?": the CLI's and the
 * dashboard's labels show such a location by its name, anything else as it is.
 */
import { describe, expect, it } from 'vitest'
import { LOCATIONS } from '../../src/schema/enums.js'
import { mayBePrivateLocation } from '../../src/schema/private-location.js'

describe('mayBePrivateLocation', () => {
  it('is false for every public region, a region-like name, `local` and `heartbeat`; true for a slug a location may take', () => {
    for (const region of LOCATIONS) expect(mayBePrivateLocation(region), region).toBe(false)
    for (const other of ['eu-west-9', 'local', 'heartbeat', '', 'a b']) expect(mayBePrivateLocation(other), other).toBe(false)
    for (const slug of ['office', 'office-berlin', 'Lab-2']) expect(mayBePrivateLocation(slug), slug).toBe(true)
  })
})
