import { defineConfig } from 'monitors-as-code'

export default defineConfig({ projectName: 'minimal' })
