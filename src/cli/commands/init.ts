import { relative, resolve } from 'node:path'
import { scaffoldProject } from '../../project/scaffold.js'
import type { Command } from '../command.js'

interface InitArgs {
  dir: string
  'project-name'?: string
}

export const initCommand: Command<InitArgs> = {
  command: 'init [dir]',
  describe: 'Scaffold a config, an example check file and the .gitignore lines',
  builder: (y) =>
    y
      .positional('dir', { type: 'string', default: '.', describe: 'Directory of the new project' })
      .option('project-name', { type: 'string', describe: 'Project name (default: the directory name)' }),
  handler: (args) => {
    const dir = resolve(args.dir)
    const result = scaffoldProject(dir, { projectName: args['project-name'] })
    const show = (f: string) => relative(process.cwd(), f) || f
    for (const file of result.written) process.stderr.write(`created ${show(file)}\n`)
    if (result.gitignore !== 'unchanged') process.stderr.write(`${result.gitignore === 'created' ? 'created' : 'updated'} ${show(resolve(dir, '.gitignore'))} (.monitors/)\n`)
    process.stderr.write(
      '\nNext:\n  npm install --save-dev monitors-as-code   (if the project does not have it yet)\n  npx monitors plan\n',
    )
    return 0
  },
}
