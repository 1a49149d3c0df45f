//! Fedora IoT: the same rules as RHEL for Edge (`spec::r4e::filter`).

pub mod v1_0;
