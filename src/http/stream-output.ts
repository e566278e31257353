// Where a stream's bytes go. Over a real socket with a chunked response, frames are written to the
// socket directly as ready-made HTTP chunks: one write per event, and for the newest event one
// shared Buffer for every subscriber, instead of ServerResponse's three-part chunk per write. Any
// other response (HTTP/1.0, or inject() in tests) goes through ServerResponse unchanged.
import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';

export interface StreamOutput {
  /** False when the socket is full; wait for onDrain. */
  write(frame: Buffer | string): boolean;
  /** Writes a frame that is already in this output's wire form (frames.ts builds those for `chunked`). */
  writeWire(frame: Buffer): boolean;
  /** Whether wire frames are HTTP chunks (raw) or plain frames (through ServerResponse). */
  readonly chunked: boolean;
  cork(): void;
  uncork(): void;
  /** Returns the listener's removal: a keep-alive socket outlives the stream, its listeners must not. */
  onDrain(listener: () => void): () => void;
  end(): void;
}

const CRLF = Buffer.from('\r\n');

/** A frame as it goes on the wire for an output of this kind (an HTTP chunk when `chunked`). */
function wireFrame(frame: Buffer, chunked: boolean): Buffer {
  return chunked ? Buffer.concat([Buffer.from(`${frame.length.toString(16)}\r\n`), frame, CRLF]) : frame;
}

/** Call after writeHead. */
export function outputFor(res: ServerResponse): StreamOutput {
  res.flushHeaders();
  const socket = res.socket;
  // chunkedEncoding is set by Node once the headers are stored; it is what res.end() will honour.
  const raw = socket instanceof Socket && (res as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding === true;
  if (!raw || !socket) {
    return {
      chunked: false,
      write: (frame) => res.write(frame),
      writeWire: (frame) => res.write(frame),
      cork: () => res.cork(),
      uncork: () => res.uncork(),
      onDrain: (listener) => {
        res.on('drain', listener);
        return () => void res.off('drain', listener);
      },
      end: () => void res.end(),
    };
  }
  return {
    chunked: true,
    write: (frame) => socket.write(wireFrame(Buffer.isBuffer(frame) ? frame : Buffer.from(frame), true)),
    writeWire: (frame) => socket.write(frame),
    cork: () => socket.cork(),
    uncork: () => socket.uncork(),
    onDrain: (listener) => {
      socket.on('drain', listener);
      return () => void socket.off('drain', listener);
    },
    // ServerResponse still believes the body is chunked and closes it with the final 0-chunk.
    end: () => void res.end(),
  };
}
