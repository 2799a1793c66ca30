"""What the test servers in bench/ share (tus_server.py, tus_aiohttp_server.py): a socket on
127.0.0.1 and a free port, which is printed first, the rest of the output into a log file, and
an end when whoever started the server is gone."""
import os, socket, sys, threading, time


def listen_and_log(log):
    """A listening socket on a free loopback port, its port on standard output; from then on
    standard output and error go to `log`."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    return sock


def exit_with_parent():
    """Ends the process when its standard input ends, or when it is no longer its parent's
    child (a pipe's end can outlive the parent in a sibling that inherited it)."""
    def watch():
        parent = os.getppid()
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)
    threading.Thread(target=watch, daemon=True).start()
