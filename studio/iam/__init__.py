"""Identity and access: bearer tokens and access keys, /api/v2/token and its grants, roles and permissions, users
and access rules (API and pages), login throttling; single sign-on through the organisation's OpenID Connect
provider (Run:ai's Idps), service accounts (Run:ai's Service Accounts) and the token grants that go with them."""
