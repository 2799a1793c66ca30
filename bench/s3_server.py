#!/usr/bin/env python3
"""An independent S3: moto's server (PyPI) on 127.0.0.1 and a free port, with SigV4 checked
against an IAM user of its own. Used by the tests (UploadTesting.S3Peer).

    s3_server.py LOG_FILE [--unchecked] BUCKET...

Prints `PORT ACCESS_KEY_ID SECRET_ACCESS_KEY` once the buckets exist; then answers lines on
standard input: `get BUCKET KEY` → `SIZE SHA256` (or `none`), `keys BUCKET` → the keys as a
JSON list, `uploads BUCKET` → the keys of multipart uploads not completed nor aborted,
`checksum BUCKET KEY` → the CRC-32C the object was stored with (HeadObject's ChecksumCRC32C, or
`-`), its checksum type (or `-`), and the CRC-32C of its bytes by Python's crc32c (PyPI), each
base64. It exits when its standard input ends or its parent is gone.
"""
import hashlib, json, os, socket, sys
# Requests are signed and checked from the fourth on (the first three make the user and its key);
# with --unchecked never (moto cannot check a presigned URL's query signature: it wants a header).
unchecked = "--unchecked" in sys.argv
os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "1000000000" if unchecked else "3"
from moto.server import ThreadedMotoServer
import boto3
import threading, time

log, buckets = sys.argv[1], [b for b in sys.argv[2:] if b != "--unchecked"]
out = os.fdopen(os.dup(1), "w")
fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.dup2(fd, 1)
os.dup2(fd, 2)
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=True)
server.start()
endpoint = f"http://127.0.0.1:{port}"
iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
iam.create_user(UserName="uploader")
iam.put_user_policy(UserName="uploader", PolicyName="all", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
key = iam.create_access_key(UserName="uploader")["AccessKey"]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
for bucket in buckets:
    s3.create_bucket(Bucket=bucket)
out.write(f"{port} {key['AccessKeyId']} {key['SecretAccessKey']}\n")
out.flush()


def watch_parent():
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


threading.Thread(target=watch_parent, daemon=True).start()
for line in sys.stdin:
    words = line.split(" ", 2)
    try:
        if words[0] == "get":
            body = s3.get_object(Bucket=words[1], Key=words[2].rstrip("\n"))["Body"].read()
            out.write(f"{len(body)} {hashlib.sha256(body).hexdigest()}\n")
        elif words[0] == "checksum":
            import base64, crc32c
            key = words[2].rstrip("\n")
            head = s3.head_object(Bucket=words[1], Key=key, ChecksumMode="ENABLED")
            body = s3.get_object(Bucket=words[1], Key=key)["Body"].read()
            mine = base64.b64encode(crc32c.crc32c(body).to_bytes(4, "big")).decode()
            out.write(f"{head.get('ChecksumCRC32C') or '-'} {head.get('ChecksumType') or '-'} {mine}\n")
        elif words[0] == "uploads":
            listed = s3.list_multipart_uploads(Bucket=words[1].strip()).get("Uploads", [])
            out.write(json.dumps([u["Key"] for u in listed]) + "\n")
        elif words[0] == "keys":
            listed = s3.list_objects_v2(Bucket=words[1].strip()).get("Contents", [])
            out.write(json.dumps([o["Key"] for o in listed]) + "\n")
        else:
            out.write("none\n")
    except Exception as error:
        print(error, file=sys.stderr)
        out.write("none\n")
    out.flush()
os._exit(0)
