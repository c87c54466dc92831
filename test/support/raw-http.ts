/**
 * HTTP/1.1 written by hand over a TCP socket, for requests a client library will not send: a
 * forged Host header, a body that never ends, a request line too long. Answers are read raw.
 */
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/** Sends `text` (request line, headers and body as given) and reads until the server closes or `untilMs`. */
export function rawExchange(url: URL, text: string, untilMs = 5_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const all = Buffer.concat(chunks).toString('utf8');
      const split = all.indexOf('\r\n\r\n');
      const head = split === -1 ? all : all.slice(0, split);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body: split === -1 ? '' : all.slice(split + 4) });
    };
    const timer = setTimeout(finish, untilMs);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      // A complete answer with Content-Length: stop without waiting for the close.
      const all = Buffer.concat(chunks).toString('utf8');
      const split = all.indexOf('\r\n\r\n');
      const length = /content-length: *(\d+)/i.exec(all.slice(0, split))?.[1];
      if (split !== -1 && all.startsWith('HTTP/1.1 101')) return finish();
      if (split !== -1 && length !== undefined && Buffer.byteLength(all.slice(split + 4)) >= Number(length)) finish();
    });
    socket.on('close', finish);
    socket.on('error', (err) => (chunks.length > 0 ? finish() : reject(err)));
    socket.write(text);
  });
}

/** A request with the given method, path, headers (Host included, as given) and body. */
export function rawRequest(url: URL, method: string, path: string, headers: Record<string, string>, body = ''): Promise<RawAnswer> {
  const lines = [`${method} ${path} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== '') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  lines.push('Connection: close');
  return rawExchange(url, `${lines.join('\r\n')}\r\n\r\n${body}`);
}

/** Opens a socket and keeps it, for tests that hold connections open. */
export function openSocket(url: URL): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}
