/**
 * The worker thread that scrubs a run's files (artifacts.ts starts it, one per run that has
 * files to scrub): zips entry by entry, other files in pieces (archive.ts), so that a run's
 * archive, a zip bomb among them, is never unpacked on the thread of the server or the agent.
 * Answers each file as it is done: `{ file, ok }` or `{ file, ok: false, reason }`.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { ArchiveRefused, scrubPlainFile, scrubZipFile, type ArchiveLimits } from './archive.js'
import { scrubberOf } from './scrub.js'

export interface ScrubJob {
  file: string
  zip: boolean
}

export interface ScrubWork {
  jobs: ScrubJob[]
  forms: string[]
  limits: ArchiveLimits
}

export type ScrubAnswer = { file: string; ok: true } | { file: string; ok: false; refused: boolean; reason: string }

if (parentPort) {
  const { jobs, forms, limits } = workerData as ScrubWork
  const scrub = scrubberOf(forms)
  for (const job of jobs) {
    let answer: ScrubAnswer
    try {
      if (job.zip) scrubZipFile(job.file, scrub, limits)
      else scrubPlainFile(job.file, scrub)
      answer = { file: job.file, ok: true }
    } catch (error) {
      answer = { file: job.file, ok: false, refused: error instanceof ArchiveRefused, reason: (error as Error).message }
    }
    parentPort.postMessage(answer)
  }
}
