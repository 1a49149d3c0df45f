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
mkdir -p etc/ssh/sshd_config.d && chmod 0755 etc/ssh/sshd_config.d && chown 0:0 etc/ssh/sshd_config.d
mkdir -p home/bob && chmod 0750 home/bob && chown 0:0 home/bob
mkdir -p var/x && printf %s '' > var/x/y && chmod 0640 var/x/y && chown 4242:4242 var/x/y
mkdir -p home/alice && printf %s old > home/alice/f && chmod 0640 home/alice/f && chown 1001:1001 home/alice/f
mkdir -p etc/systemd/system usr/lib/systemd/system
printf %s '[Unit]
Description=u
[Service]
ExecStart=/bin/true
[Install]
WantedBy=multi-user.target
' > usr/lib/systemd/system/a.service
printf %s '[Service]
ExecStart=/bin/echo %i
[Install]
WantedBy=multi-user.target
' > etc/systemd/system/c@.service
{ mkdir -p etc/systemd/system/a.service/sub; } 2>/dev/null || true
{ mkdir -p etc/systemd/system && ln -sfn ../../../etc/hostname etc/systemd/system/b.service; } 2>/dev/null || true
