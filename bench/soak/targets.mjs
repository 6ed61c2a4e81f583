// The soak's targets on loopback, in a process of their own (so the bench's own work does not
// slow their answers): a DNS server (every A question answered), an HTTP server (GET /ok answers
// {"status":"ok"}; POST /hook is the alert webhook's receiver), a second HTTP server (the target
// that goes down: "down" on stdin closes it and drops its connections, "up" listens again on
// the same port) and a TCP server that answers "PONG". Prints its ports as one JSON line; "stats"
// on stdin prints the webhook deliveries received as one JSON line.
import { createSocket } from 'node:dgram'
import http from 'node:http'
import net from 'node:net'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const packet = createRequire(join(root, 'package.json'))('dns-packet')

const listen = (server, port = 0) =>
  new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve(server.address().port))
  })

// DNS
const dns = createSocket('udp4')
dns.on('message', (message, remote) => {
  let query
  try {
    query = packet.decode(message)
  } catch {
    return
  }
  const q = query.questions[0]
  const answers = q && q.type === 'A' ? [{ type: 'A', name: q.name, ttl: 60, class: 'IN', data: '192.0.2.1' }] : []
  dns.send(
    packet.encode({ type: 'response', id: query.id, flags: packet.AUTHORITATIVE_ANSWER, questions: query.questions, answers }),
    remote.port,
    remote.address,
  )
})
const dnsPort = await new Promise((resolve) => dns.bind(0, '127.0.0.1', () => resolve(dns.address().port)))

// HTTP: the steady target and the alert webhook's receiver
const deliveries = new Map()
const web = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    if (req.method === 'POST' && req.url.startsWith('/hook')) {
      const id = String(req.headers['x-monitors-delivery-id'] ?? '')
      let event = {}
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        // a body that is not the event: counted under its delivery id all the same
      }
      const seen = deliveries.get(id) ?? { times: 0, checkId: event.checkId, alertType: event.alertType ?? req.headers['x-monitors-alert-type'] }
      seen.times++
      deliveries.set(id, seen)
      res.writeHead(204).end()
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}')
  })
})
web.keepAliveTimeout = 5000
const webPort = await listen(web)

// HTTP: the target that goes down
const sockets = new Set()
let flaky
const flakyServer = () => {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}'))
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  return server
}
flaky = flakyServer()
const flakyPort = await listen(flaky)

// TCP
const tcp = net.createServer((socket) => {
  socket.on('data', () => socket.end('PONG\r\n'))
  socket.on('error', () => undefined)
})
const tcpPort = await listen(tcp)

process.stdout.write(`${JSON.stringify({ dnsPort, webPort, flakyPort, tcpPort })}\n`)

let input = ''
process.stdin.setEncoding('utf8').on('data', async (chunk) => {
  input += chunk
  for (let at = input.indexOf('\n'); at >= 0; at = input.indexOf('\n')) {
    const command = input.slice(0, at).trim()
    input = input.slice(at + 1)
    if (command === 'down') {
      await new Promise((resolve) => {
        flaky.close(resolve)
        for (const socket of sockets) socket.destroy()
      })
      process.stdout.write('{"down":true}\n')
    } else if (command === 'up') {
      flaky = flakyServer()
      await listen(flaky, flakyPort)
      process.stdout.write('{"up":true}\n')
    } else if (command === 'stats') {
      process.stdout.write(`${JSON.stringify({ deliveries: [...deliveries].map(([id, d]) => ({ id, ...d })) })}\n`)
    }
  }
})
process.on('SIGTERM', () => process.exit(0))
