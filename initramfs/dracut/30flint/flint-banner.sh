#!/bin/sh
# dracut shutdown-emergency hook (rd.shell=0: no shell, the emergency action follows):
# the failure banner of a failed flint unit, then dracut halts, reboots or powers off.
/usr/lib/flint/flint-firstboot banner >/dev/console 2>&1
