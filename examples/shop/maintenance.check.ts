import { MaintenanceWindow } from 'monitors-as-code'

new MaintenanceWindow('weekly-db-upgrade', {
  name: 'Weekly database upgrade',
  tags: ['shop'],
  startsAt: '2026-01-31T22:00:00Z',
  endsAt: '2026-01-31T23:00:00Z',
  repeatInterval: 1,
  repeatUnit: 'WEEK',
})
