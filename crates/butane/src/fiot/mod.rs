//! Fedora IoT: the same rules as RHEL for Edge (`spec::r4e::filter`).

pub mod v1_0;
pub mod v1_1_exp;
