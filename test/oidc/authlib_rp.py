"""A relying party on Authlib (PyPI), as its documentation shows a Flask app signing users in: the
Flask OAuth client registered from the OpenID Provider's discovery document, with its defaults
(client_secret_basic; the ID token checked against jwks_uri with the algorithms the document lists,
and its iss, aud, exp, nonce and at_hash), plus PKCE; then userinfo. The app runs in Flask's test
client, which keeps its session (state, nonce, PKCE verifier) between the two requests.

Protocol (test/oidc/relyingParties.test.ts): environment OIDC_ISSUER, OIDC_CLIENT_ID,
OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI (OIDC_ID_TOKEN_ALG is not read: Authlib's client has no
setting for it). Prints `AUTHORIZE <url>`, reads the callback URL from stdin, prints
`RESULT {...}`. Any failure exits non-zero with the reason.
"""

import base64
import json
import os
import sys
from urllib.parse import urlparse

from authlib.integrations.flask_client import OAuth
from flask import Flask, jsonify

ISSUER = os.environ["OIDC_ISSUER"]
REDIRECT_URI = os.environ["OIDC_REDIRECT_URI"]

app = Flask(__name__)
app.secret_key = os.urandom(16)
app.testing = True  # an exception in the callback fails the script with its traceback
oauth = OAuth(app)
oauth.register(
    "service",
    client_id=os.environ["OIDC_CLIENT_ID"],
    client_secret=os.environ["OIDC_CLIENT_SECRET"],
    server_metadata_url=f"{ISSUER}/.well-known/openid-configuration",
    client_kwargs={"scope": "openid user_info", "code_challenge_method": "S256"},
)


@app.route("/login")
def login():
    return oauth.service.authorize_redirect(REDIRECT_URI)


@app.route("/callback")
def callback():
    # Checks state, exchanges the code, and validates the ID token (parse_id_token).
    token = oauth.service.authorize_access_token()
    header = json.loads(base64.urlsafe_b64decode(token["id_token"].split(".")[0] + "=="))
    claims = dict(token["userinfo"])
    userinfo = dict(oauth.service.userinfo(token=token))
    if userinfo["sub"] != claims["sub"]:
        raise AssertionError(f"userinfo sub {userinfo['sub']} is not the ID token's {claims['sub']}")
    return jsonify(
        library="authlib",
        expected_alg=None,
        alg=header["alg"],
        kid=header.get("kid"),
        sub=claims["sub"],
        aud=claims["aud"],
        iss=claims["iss"],
        userinfo_sub=userinfo["sub"],
    )


def main():
    relying_party = app.test_client()
    start = relying_party.get("/login")
    if start.status_code != 302:
        sys.exit(f"the app's sign-in: expected 302, got {start.status_code}")
    print("AUTHORIZE " + start.headers["Location"], flush=True)
    line = sys.stdin.readline().strip()
    if not line:
        sys.exit("no callback URL on stdin")
    callback_url = urlparse(line)
    if callback_url.geturl().split("?")[0] != REDIRECT_URI:
        sys.exit(f"the browser was sent to {line}, not the registered callback")
    result = relying_party.get(f"/callback?{callback_url.query}")
    if result.status_code != 200:
        sys.exit(f"the app's callback: expected 200, got {result.status_code}: {result.get_data(as_text=True)[:500]}")
    print("RESULT " + json.dumps(result.get_json()), flush=True)


if __name__ == "__main__":
    main()
