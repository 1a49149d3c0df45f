//! KubeVirt: `cloudInitNoCloud` (drive `cidata`, `/user-data`) or `cloudInitConfigDrive`
//! (drive `config-2`, `/openstack/latest/user_data`), whichever appears first. Upstream
//! waits for ever; flint for the provider fetch timeout, then goes on without a config.

use super::{Context, Platform, UserData, drive};

pub(super) struct KubeVirt;

impl Platform for KubeVirt {
    fn name(&self) -> &'static str {
        "kubevirt"
    }

    fn fetch(&self, cx: &Context) -> Result<UserData, String> {
        let wait = cx.fetch_timeout();
        let attempts = vec![
            (
                "config drive (cidata)".to_string(),
                drive::drive_attempt(cx, "cidata", "/user-data", wait),
            ),
            (
                "config drive (config-2)".to_string(),
                drive::drive_attempt(cx, "config-2", "/openstack/latest/user_data", wait),
            ),
        ];
        Ok(match drive::first_of(cx, attempts) {
            Some((from, bytes)) => UserData::new(bytes, from),
            None => UserData::none("no config drive"),
        })
    }
}
