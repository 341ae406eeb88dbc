"""A Python web app that signs its users in with the service, as authlib's documentation shows it:
authlib's Flask OAuth client registered from the OpenID Provider's discovery document, with its
defaults (client_secret_basic, ID token checked against jwks_uri: signature, iss, aud, exp, nonce,
at_hash), plus PKCE. The app runs in Flask's test client; the user's browser is a requests session
that answers the service's real login and consent pages over HTTP.

Reads OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI, OIDC_LOGIN and
OIDC_PASSWORD; prints one JSON object: the ID token's claims as authlib validated them, the
userinfo it fetched, and the token response's scope and keys. Exits non-zero on any failure.
"""

import html
import json
import os
import re
import sys
from urllib.parse import urljoin, urlparse

import requests
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
    token = oauth.service.authorize_access_token()
    return jsonify(
        id_token_claims=dict(token["userinfo"]),
        userinfo=dict(oauth.service.userinfo(token=token)),
        scope=token.get("scope"),
        token_keys=sorted(token.keys()),
    )


def hidden_fields(page: str) -> dict:
    pattern = r'<input type="hidden" name="([^"]+)" value="([^"]*)">'
    return {name: html.unescape(value) for name, value in re.findall(pattern, page)}


def expect(response, status: int, step: str):
    if response.status_code != status:
        sys.exit(f"{step}: expected {status}, got {response.status_code}: {response.text[:300]}")
    return response


def main():
    relying_party = app.test_client()
    browser = requests.Session()
    # The app sends the browser to the authorization endpoint; the service asks the user to log in.
    start = expect(relying_party.get("/login"), 302, "the app's sign-in")
    to_login = expect(browser.get(start.headers["Location"], allow_redirects=False), 302, "authorize")
    login_page = expect(browser.get(urljoin(ISSUER, to_login.headers["Location"])), 200, "login page")
    fields = {**hidden_fields(login_page.text), "login": os.environ["OIDC_LOGIN"], "password": os.environ["OIDC_PASSWORD"]}
    logged_in = expect(browser.post(urljoin(ISSUER, "/login"), data=fields, allow_redirects=False), 303, "login")
    consent = expect(browser.get(urljoin(ISSUER, logged_in.headers["Location"]), allow_redirects=False), 200, "consent page")
    fields = {**hidden_fields(consent.text), "decision": "allow"}
    allowed = expect(browser.post(urljoin(ISSUER, "/oauth/authorize/decision"), data=fields, allow_redirects=False), 303, "allow")
    callback_url = urlparse(allowed.headers["Location"])
    result = expect(relying_party.get(f"{callback_url.path}?{callback_url.query}"), 200, "the app's callback")
    print(json.dumps(result.get_json()))


if __name__ == "__main__":
    main()
