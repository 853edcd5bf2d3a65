/**
 * The bench's output: one `bench <name> <value> <unit> ratio <r> vs <baseline>` line per figure as
 * it is measured, and the table of all figures at the end.
 */
import os from 'node:os'

export interface Figure {
  name: string
  value: number
  unit: string
  ratio: number
  baseline: string
  target: string
  met: boolean
  /** Not one of the issue's targets: printed for comparison, neither met nor missed. */
  reference?: boolean
  /** Why a figure has no target here (printed in the table instead of met/MISSED). */
  noTarget?: string
  peakRssMiB?: number
  /** The serving process's resident memory before any load (after start-up and the definitions' load). */
  idleRssMiB?: number
  note?: string
}

export const round = (n: number) => (n >= 100 ? Math.round(n) : Math.round(n * 100) / 100)

const figures: Figure[] = []

const rssText = (f: Figure) =>
  f.peakRssMiB === undefined
    ? '-'
    : `${f.idleRssMiB === undefined ? '' : `${f.idleRssMiB.toFixed(0)} / `}${f.peakRssMiB.toFixed(0)} MiB`

export function report(figure: Figure): void {
  figures.push(figure)
  const idle = figure.idleRssMiB === undefined ? '' : ` idle_rss ${figure.idleRssMiB.toFixed(0)} MiB`
  const rss = figure.peakRssMiB === undefined ? '' : `${idle} peak_rss ${figure.peakRssMiB.toFixed(0)} MiB`
  console.log(
    `bench ${figure.name} ${round(figure.value)} ${figure.unit} ratio ${figure.ratio.toFixed(2)} vs ${figure.baseline}${rss}${figure.note ? ` (${figure.note})` : ''}`,
  )
}

export function printTable(elapsedMs: number, secondsPerMeasurement: number): void {
  const status = (f: Figure) => f.noTarget ?? (f.reference ? 'reference' : f.met ? 'met' : 'MISSED')
  const rows = figures.map((f) => [
    f.name,
    `${round(f.value)} ${f.unit}`,
    f.ratio.toFixed(2),
    f.target,
    status(f),
    rssText(f),
  ])
  const header = ['figure', 'value', 'ratio', 'target', '', 'RSS idle / peak']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')
  console.log(`\n${line(header)}\n${rows.map(line).join('\n')}`)
  const load = os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')
  console.log(
    `\n${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}; load average ${load} at the end; ${secondsPerMeasurement} s per measurement; ${(elapsedMs / 1000).toFixed(0)} s in all`,
  )
}
