#!/usr/bin/env python3
"""An independent tus 1.0.0 server: tuspyserver (PyPI, a FastAPI router) run by uvicorn on
127.0.0.1 and a free port, which it prints first. Used by the tests (UploadTesting.TusPeer) and
by bench/resume.

    tus_server.py FILES_DIR MAX_SIZE LOG_FILE [checksum [N,...]]

Uploads go in FILES_DIR; uvicorn's access log and errors go to LOG_FILE; it exits when its
standard input ends or its parent is gone. With `checksum`, the checksum extension is added in
front of tuspyserver (which has none): `Upload-Checksum` of each PATCH is verified with Python's
hashlib and a mismatch answered 460 with nothing kept; the PATCHes numbered N (from 1) arrive
with their first byte flipped, as a damaged link would deliver them.
"""
import base64, hashlib, sys
import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router
from peer_process import exit_with_parent, listen_and_log

files_dir, max_size, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
checksums = len(sys.argv) > 4 and sys.argv[4] == "checksum"
corrupt = {int(n) for n in sys.argv[5].split(",") if n} if len(sys.argv) > 5 else set()
app = FastAPI()
app.include_router(create_tus_router(prefix="files", files_dir=files_dir, max_size=max_size))


class Checksums:
    """The checksum extension in front of a tus server (an ASGI middleware)."""

    def __init__(self, app):
        self.app = app
        self.patches = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] not in ("OPTIONS", "PATCH"):
            return await self.app(scope, receive, send)
        if scope["method"] == "OPTIONS":
            async def announce(message):
                if message["type"] == "http.response.start":
                    headers = [(k, v) for k, v in message["headers"] if k.lower() != b"tus-extension"]
                    extensions = dict(message["headers"]).get(b"tus-extension", b"creation")
                    headers += [(b"tus-extension", extensions + b",checksum"), (b"tus-checksum-algorithm", b"sha1,md5,sha256")]
                    message = dict(message, headers=headers)
                await send(message)
            return await self.app(scope, receive, announce)
        value = dict(scope["headers"]).get(b"upload-checksum")
        if value is None:
            return await self.app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        self.patches += 1
        if self.patches in corrupt and body:
            body = bytes([body[0] ^ 1]) + body[1:]
        algorithm, encoded = value.decode().split(" ", 1)
        if hashlib.new(algorithm, body).digest() != base64.b64decode(encoded):
            await send({"type": "http.response.start", "status": 460,
                        "headers": [(b"tus-resumable", b"1.0.0"), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        given = False

        async def replay():
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()
        return await self.app(scope, replay, send)


served = Checksums(app) if checksums else app
# uvicorn's access log goes to standard output: into the log file, like the rest.
sock = listen_and_log(log)
exit_with_parent()
uvicorn.Server(uvicorn.Config(served, log_level="info", access_log=True)).run(sockets=[sock])
