#!/bin/sh
# dracut emergency hook (sourced before the emergency shell): after a failed flint unit,
# the failure banner and Flatcar's "press Enter or reboot" prompt (flint-firstboot).
/usr/lib/flint/flint-firstboot emergency
