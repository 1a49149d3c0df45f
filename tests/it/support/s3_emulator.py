#!/usr/bin/env python3
"""A real S3 emulator (moto's server, from PyPI) for flint's object-storage tests.

Starts moto on 127.0.0.1 (a free port), creates an IAM role allowed to read S3, assumes it
through STS (temporary credentials with a session token, as IMDS hands out), creates the
bucket `flint-bucket` in eu-west-1 with the objects the tests read, then turns on moto's
request authentication: from then on every request must carry a valid SigV4 signature of
known credentials, and a wrong signature is refused with SignatureDoesNotMatch.

Prints one JSON line (endpoint, credentials, bucket) and serves until stdin closes.
"""
import json
import sys

import boto3
from moto import settings
from moto.server import ThreadedMotoServer

server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
_, port = server.get_host_and_port()
url = f"http://127.0.0.1:{port}"
kw = dict(
    endpoint_url=url,
    region_name="eu-west-1",
    aws_access_key_id="setup",
    aws_secret_access_key="setup",
)
iam = boto3.client("iam", **kw)
sts = boto3.client("sts", **kw)
s3 = boto3.client("s3", **kw)

trust = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
    ],
}
role = iam.create_role(RoleName="flint-role", AssumeRolePolicyDocument=json.dumps(trust))
read = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject", "s3:ListBucket"], "Resource": "*"}],
}
iam.put_role_policy(RoleName="flint-role", PolicyName="read", PolicyDocument=json.dumps(read))
creds = sts.assume_role(RoleArn=role["Role"]["Arn"], RoleSessionName="flint")["Credentials"]

s3.create_bucket(Bucket="flint-bucket", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
s3.put_object(Bucket="flint-bucket", Key="dir/private object.txt", Body=b"private S3 object\n")
s3.put_object(Bucket="flint-bucket", Key="config.ign", Body=b'{"ignition":{"version":"3.4.0"}}')

# From here on, every request is authenticated and authorized.
settings.INITIAL_NO_AUTH_ACTION_COUNT = 0

print(
    json.dumps(
        {
            "endpoint": url,
            "bucket": "flint-bucket",
            "region": "eu-west-1",
            "access_key_id": creds["AccessKeyId"],
            "secret_access_key": creds["SecretAccessKey"],
            "token": creds["SessionToken"],
        }
    ),
    flush=True,
)
sys.stdin.read()
server.stop()
