#!/usr/bin/env python3
"""A TCP relay that makes loopback look like a distant link, for the benchmarks.

    bench/relay.py --listen PORT --to PORT [--host ADDRESS] [--delay-ms 100] [--mbit 50] [--reset-after BYTES]
                   [--reset-count K] [--count-file PATH] [--queue-ms 250]

Every byte is delivered --delay-ms after it would have left a link of --mbit megabits per
second (one-way delay; the round trip is twice it). The bandwidth is shared by all connections
in each direction, as one access link is. With --reset-after, each connection is reset (RST)
once that many bytes went towards the server (with --reset-count, only the first K connections
that get that far): what is still on its way then is lost, as on a real link. With --count-file,
two numbers are written there whenever a connection ends: the bytes clients put on the wire
towards the server, and the bytes that reached it. --queue-ms: how far ahead of the link the relay
reads from a sender (its queue; a real path holds a sender to about its window, a round trip or
two). SIGUSR1 re-arms the cuts (the next K
connections are cut again). This kernel has no netem; this is the stand-in.
Prints "listening PORT" on standard output once it accepts connections.
"""
import argparse, asyncio, signal, socket, struct, time

class Link:
    """One direction of the shared link: when it is next free to put a byte on the wire."""
    def __init__(self, bytes_per_second):
        self.rate = bytes_per_second
        self.free_at = 0.0

    def transmit(self, count, now):
        start = max(now, self.free_at)
        self.free_at = start + (count / self.rate if self.rate else 0)
        return self.free_at

toward_server = [0, 0]  # sent by clients, delivered to the server
cuts = [0]

def counted(count):
    toward_server[0] += count

def delivered(count):
    toward_server[1] += count

async def pump(reader, writer, link, delay, limit=None, on_limit=None, count=None, on_delivered=None, armed=lambda: True, queue_ahead=0.25):
    queue = asyncio.Queue()
    async def deliver():
        while True:
            due, data = await queue.get()
            if data is None:
                try:
                    await writer.drain(); writer.write_eof()
                except Exception:
                    pass
                return
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
            if on_delivered:
                on_delivered(len(data))
    deliverer = asyncio.create_task(deliver())
    sent = 0
    try:
        while True:
            data = await reader.read(16384)
            if not data:
                break
            if limit is not None and sent + len(data) >= limit and armed():
                data = data[:limit - sent]
                if count:
                    count(len(data))
                queue.put_nowait((link.transmit(len(data), time.monotonic()) + delay, data))
                on_limit()
                return
            sent += len(data)
            if count:
                count(len(data))
            finished = link.transmit(len(data), time.monotonic())
            queue.put_nowait((finished + delay, data))
            # Back-pressure: do not read far ahead of what the link can carry.
            ahead = link.free_at - time.monotonic()
            if ahead > queue_ahead:
                await asyncio.sleep(ahead - queue_ahead)
    except (ConnectionError, OSError):
        pass
    queue.put_nowait((0, None))
    try:
        await deliverer
    except (ConnectionError, OSError):
        pass

def reset(writer):
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()

async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--to", type=int, required=True)
    parser.add_argument("--delay-ms", type=float, default=100)
    parser.add_argument("--mbit", type=float, default=50)
    parser.add_argument("--reset-after", type=int)
    parser.add_argument("--reset-count", type=int)
    parser.add_argument("--count-file")
    parser.add_argument("--queue-ms", type=float, default=250)
    args = parser.parse_args()
    rate = args.mbit * 1e6 / 8
    up, down = Link(rate), Link(rate)
    delay = args.delay_ms / 1000

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", args.to)
        except OSError:
            client_writer.close()
            return
        def cut():
            cuts[0] += 1
            reset(client_writer); reset(server_writer)
        # Whether a cut is still due is asked when this connection reaches the size, not when it
        # opens: connections side by side must not all be cut once the count was reached.
        limit = args.reset_after
        armed = lambda: args.reset_count is None or cuts[0] < args.reset_count
        # The connection itself costs a round trip, as a real handshake over the link does.
        await asyncio.sleep(2 * delay)
        await asyncio.gather(
            pump(client_reader, server_writer, up, delay, limit, cut, counted, delivered, armed, args.queue_ms / 1000),
            pump(server_reader, client_writer, down, delay, queue_ahead=args.queue_ms / 1000),
            return_exceptions=True)
        for w in (client_writer, server_writer):
            try:
                w.close()
            except Exception:
                pass
        if args.count_file:
            with open(args.count_file, "w") as f:
                f.write(f"{toward_server[0]} {toward_server[1]}\n")

    # SIGUSR1 re-arms the cuts: the next --reset-count connections are cut again.
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, lambda: cuts.__setitem__(0, 0))
    server = await asyncio.start_server(handle, args.host, args.listen)
    print("listening", server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
