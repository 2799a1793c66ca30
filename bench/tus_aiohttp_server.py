#!/usr/bin/env python3
"""A second independent tus 1.0.0 server: aiohttp-tus (PyPI) on 127.0.0.1 and a free port,
which it prints first. Used by the tests (UploadTesting.TusPeer with `.aiohttpTus`).

    tus_aiohttp_server.py FILES_DIR MAX_REQUEST LOG_FILE

Complete uploads are stored in FILES_DIR under their `filename` metadata; partial ones in
FILES_DIR/resources. aiohttp reads a whole request body into memory and refuses one over
MAX_REQUEST bytes with 413, without saying so beforehand (as many deployments do). The access
log and errors go to LOG_FILE; it exits when its standard input ends or its parent is gone.
aiohttp-tus differs from the specification in ways worth meeting: it answers an `OPTIONS`
without `Tus-Resumable` with an empty 200 (the specification exempts `OPTIONS` from that
header), and a creation without `Tus-Resumable` with 500.
"""
import logging, pathlib, sys
from aiohttp import web
from aiohttp_tus import setup_tus
from peer_process import exit_with_parent, listen_and_log

files_dir, max_request, log = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
app = setup_tus(web.Application(client_max_size=max_request), upload_path=files_dir, upload_url="/files")

sock = listen_and_log(log)
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
exit_with_parent()
web.run_app(app, sock=sock, print=None, access_log=logging.getLogger("aiohttp.access"))
