import { relative, resolve } from 'node:path'
import { scaffoldProject } from '../../project/scaffold.js'
import { io } from '../io.js'
import type { Command } from '../command.js'

interface InitArgs {
  dir: string
  'project-name'?: string
}

export const initCommand: Command<InitArgs> = {
  command: 'init [dir]',
  describe: 'Scaffold a config, an example check file, a tsconfig.json and the .gitignore lines',
  builder: (y) =>
    y
      .positional('dir', { type: 'string', default: '.', describe: 'Directory of the new project' })
      .option('project-name', { type: 'string', describe: 'Project name (default: the directory name)' }),
  handler: (args) => {
    const dir = resolve(args.dir)
    const result = scaffoldProject(dir, { projectName: args['project-name'] })
    const show = (f: string) => relative(process.cwd(), f) || f
    for (const file of result.written) io().stderr.write(`created ${show(file)}\n`)
    for (const file of result.skipped) io().stderr.write(`skipped ${show(file)} (it exists and is never overwritten; for "tsc --noEmit" it should include monitoring.config.ts and the check files)\n`)
    const gitignore = show(resolve(dir, '.gitignore'))
    if (result.gitignore !== 'unchanged') io().stderr.write(`${result.gitignore === 'created' ? 'created' : 'updated'} ${gitignore} (${result.gitignoreLines.join(', ')})\n`)
    else io().stderr.write(`skipped ${gitignore} (it already ignores node_modules/ and .monitors/)\n`)
    io().stderr.write(
      '\nNext:\n  npm install --save-dev monitors-as-code typescript @types/node   (what the project does not have yet)\n  npx monitors plan        (the embedded local server; in CI set MONITORING_API_URL or pass --local)\n  npx tsc --noEmit         (type-checks the config and the check files)\n',
    )
    return 0
  },
}
