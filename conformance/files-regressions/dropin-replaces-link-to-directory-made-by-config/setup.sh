#!/bin/sh
# Creates the starting target root in the current directory (an empty dir).
set -e
umask 022
mkdir -p etc home/alice
cat > etc/passwd <<'EOT'
root:x:0:0:root:/root:/bin/bash
daemon:x:4242:4242:daemon:/usr/sbin:/usr/sbin/nologin
alice:x:1001:1001:Alice:/home/alice:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOT
cat > etc/group <<'EOT'
root:x:0:
wheel:x:10:
staff:x:50:alice
users:x:100:
alice:x:1001:
daemon:x:4242:
nogroup:x:65534:
EOT
cat > etc/shadow <<'EOT'
root:*:19000:0:99999:7:::
daemon:*:19000:0:99999:7:::
alice:!:19000:0:99999:7:::
nobody:*:19000:0:99999:7:::
EOT
cat > etc/gshadow <<'EOT'
root:*::
wheel:*::
staff:*::alice
users:*::
alice:!::
daemon:*::
nogroup:*::
EOT
chmod 0640 etc/shadow etc/gshadow
chown 1001:1001 home/alice
chmod 0700 home/alice
# generated scenario
mkdir -p home/bob && chmod 0700 home/bob && chown 4242:50 home/bob
mkdir -p home/alice && printf %s old > home/alice/f && chmod 0755 home/alice/f && chown 1001:1001 home/alice/f
mkdir -p srv && printf %s '' > srv/s && chmod 0755 srv/s && chown 1001:1001 srv/s
mkdir -p etc && printf %s '' > etc/hostname && chmod 0640 etc/hostname && chown 0:0 etc/hostname
mkdir -p . && rm -rf dir && ln -s /etc/a dir
mkdir -p . && rm -rf lnk && ln -s /etc lnk
mkdir -p etc/systemd/system usr/lib/systemd/system
printf %s '[Socket]
ListenStream=1
[Install]
WantedBy=sockets.target
' > etc/systemd/system/d.socket
printf '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n' > usr/lib/systemd/system/vendor.service
