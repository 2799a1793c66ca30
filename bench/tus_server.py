#!/usr/bin/env python3
"""An independent tus 1.0.0 server: tuspyserver (PyPI, a FastAPI router) run by uvicorn on
127.0.0.1 and a free port, which it prints first. Used by the tests (UploadTesting.TusPeer) and
by bench/resume.

    tus_server.py FILES_DIR MAX_SIZE LOG_FILE

Uploads go in FILES_DIR; uvicorn's access log and errors go to LOG_FILE; it exits when its
standard input ends or its parent is gone.
"""
import os, socket, sys, threading, time
import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router

files_dir, max_size, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
app = FastAPI()
app.include_router(create_tus_router(prefix="files", files_dir=files_dir, max_size=max_size))
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(128)
print(sock.getsockname()[1], flush=True)
# uvicorn's access log goes to standard output: into the log file, like the rest.
out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.dup2(out, 1)
os.dup2(out, 2)

def watch_parent():
    # Gone with whoever started it: when its standard input ends, or when it is no longer this
    # process's parent (a pipe's end can outlive the parent in a sibling that inherited it).
    parent = os.getppid()
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)

threading.Thread(target=watch_parent, daemon=True).start()
uvicorn.Server(uvicorn.Config(app, log_level="info", access_log=True)).run(sockets=[sock])
