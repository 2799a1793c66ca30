#!/usr/bin/env python3
"""A third independent tus 1.0.0 server: fastapi-tusd (PyPI; a FastAPI router) run by uvicorn on
127.0.0.1 and a free port, which it prints first. Used by the tests (UploadTesting.TusPeer with
`.fastapiTusd`).

    tus_fastapi_server.py FILES_DIR MAX_SIZE LOG_FILE

Uploads go in FILES_DIR as `<id>` and `<id>.info`; uvicorn's access log and errors go to
LOG_FILE; it exits when its standard input ends or its parent is gone. Unlike aiohttp-tus it
writes a PATCH's bytes as they arrive (a cut request keeps what reached it), and it names the
upload in `Location` from a base it is given: a path here, so the client resolves it against
the URL it asked (a relay in front stays in front).
"""
import sys
import uvicorn
from fastapi import FastAPI
from fastapi_tusd import TusRouter
from peer_process import exit_with_parent, listen_and_log

files_dir, max_size, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
app = FastAPI()
app.include_router(TusRouter(store_dir=files_dir, max_size=max_size, location="/files"), prefix="/files")

sock = listen_and_log(log)
exit_with_parent()
uvicorn.Server(uvicorn.Config(app, log_level="info", access_log=True)).run(sockets=[sock])
