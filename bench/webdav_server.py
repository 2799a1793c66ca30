#!/usr/bin/env python3
"""An independent WebDAV server: WsgiDAV (PyPI) on cheroot, on 127.0.0.1 and a free port, which
it prints first. Used by the tests (UploadTesting.WebDAVPeer) for `send --put` and
`--create-dirs`.

    webdav_server.py ROOT LOG_FILE [USER:PASSWORD]

Files go under ROOT, shared as /dav/; requests and errors go to LOG_FILE; with USER:PASSWORD
every request needs that Basic login. It exits when its standard input ends or its parent is gone.
"""
import logging, os, sys
from cheroot import wsgi
from wsgidav.wsgidav_app import WsgiDAVApp
from peer_process import exit_with_parent

root, log = sys.argv[1], sys.argv[2]
login = sys.argv[3].split(":", 1) if len(sys.argv) > 3 else None
users = {"*": {login[0]: {"password": login[1]}}} if login else {"*": True}
config = {
    "provider_mapping": {"/dav": root},
    "simple_dc": {"user_mapping": users},
    "http_authenticator": {"accept_basic": True, "accept_digest": False, "default_to_digest": False},
    "verbose": 3,
    "logging": {"enable": True},
    "property_manager": True,
    "lock_storage": True,
}
# Standard output carries the port alone: WsgiDAV logs to it, so everything else goes to LOG_FILE.
port_out = os.fdopen(os.dup(1), "w")
out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.dup2(out, 1)
os.dup2(out, 2)
logging.basicConfig(stream=sys.stderr, level=logging.INFO)
server = wsgi.Server(("127.0.0.1", 0), WsgiDAVApp(config))
server.prepare()   # binds: the port is known, and connections wait in the backlog until served
port_out.write(f"{server.bind_addr[1]}\n")
port_out.close()
exit_with_parent()
server.serve()
