//! The Internet checksum (RFC 1071). PLACEHOLDER.
