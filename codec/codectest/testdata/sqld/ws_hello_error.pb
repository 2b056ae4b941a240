?
=
)Authentication failed: The JWT is invalidAUTH_JWT_INVALID