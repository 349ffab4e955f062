"""Identity and access: single sign-on through the organisation's OpenID Connect provider (Run:ai's Idps),
service accounts (Run:ai's Service Accounts) and the token grants that go with them."""
