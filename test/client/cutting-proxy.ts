// A loopback TCP proxy that cuts every connection after a random number of bytes from the server,
// abruptly (reset) or with a premature FIN, to test that a client resumes streams cut anywhere:
// mid-frame, mid-chunk-header, mid-JSON. Its upstream can be switched (a restarted daemon on
// another port) and it can refuse connections for a while (a daemon that is down).
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

export class CuttingProxy {
  cuts = 0;
  connections = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(
    public upstreamPort: number,
    /** Bytes a connection may carry from the server before it is cut; Infinity: never cut. */
    private readonly budget: () => number,
  ) {}

  async listen(): Promise<number> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  /** Drops every open connection now (as a daemon dying would). */
  dropAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  close(): void {
    this.dropAll();
    this.server?.close();
  }

  private accept(client: Socket): void {
    this.connections++;
    const upstream = connect(this.upstreamPort, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    let left = this.budget();
    const teardown = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', teardown).on('close', teardown);
    upstream.on('error', teardown).on('close', teardown);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (chunk.length < left) {
        left -= chunk.length;
        if (!client.write(chunk)) {
          upstream.pause();
          client.once('drain', () => upstream.resume());
        }
        return;
      }
      this.cuts++;
      const head = chunk.subarray(0, Math.max(0, Math.floor(left)));
      // Half the cuts are a reset (bytes in flight may be lost), half a FIN after the partial write.
      if (Math.random() < 0.5) client.end(head, () => teardown());
      else {
        client.write(head);
        client.resetAndDestroy();
        upstream.destroy();
      }
    });
    upstream.on('end', () => client.end());
  }
}
