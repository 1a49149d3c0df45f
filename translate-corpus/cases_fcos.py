# Fedora CoreOS: each base version's features and rules, boot_device, grub, partition
# warnings; shapes taken from upstream's config/fcos/*/translate_test.go and
# validate_test.go.

CASES = []


def case(name, bu, args="-p", files=None, group="fcos"):
    CASES.append(dict(group=group, name=name, args=args, files=files, bu=bu))


# --- 1.0.0 (base 0.1, Ignition 3.0.0)
case("1_0-everything", """variant: fcos
version: 1.0.0
ignition:
  config:
    merge:
      - source: https://example.com/merge.ign
        verification:
          hash: sha512-e2d6b3c9b3b9c86b0e4b7c6e2f5e5f6d2c4b2c1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8
    replace:
      source: https://example.com/replace.ign
  timeouts:
    http_response_headers: 10
    http_total: 30
  security:
    tls:
      certificate_authorities:
        - source: https://example.com/ca.pem
passwd:
  users:
    - name: core
      ssh_authorized_keys: [key1, key2]
      password_hash: $y$j9T$abc
      groups: [wheel]
      uid: 1001
  groups:
    - name: app
      gid: 2000
storage:
  disks:
    - device: /dev/vdb
      wipe_table: true
      partitions:
        - label: data
          number: 1
          size_mib: 1024
          start_mib: 0
          type_guid: 0FC63DAF-8483-4772-8E79-3D69D8477DE4
  filesystems:
    - device: /dev/disk/by-partlabel/data
      format: xfs
      label: data
      path: /var/data
      options: [-m, reflink=1]
      wipe_filesystem: true
  raid:
    - name: md0
      level: raid1
      devices: [/dev/vdc, /dev/vdd]
      spares: 1
  files:
    - path: /etc/hostname
      mode: 0644
      overwrite: true
      contents:
        inline: myhost
    - path: /etc/motd
      append:
        - inline: hello
        - source: https://example.com/motd
    - path: /etc/remote
      contents:
        source: https://example.com/file
        compression: gzip
  directories:
    - path: /var/app
      mode: 0750
      user:
        name: core
      group:
        id: 2000
  links:
    - path: /etc/localtime
      target: ../usr/share/zoneinfo/UTC
      hard: false
systemd:
  units:
    - name: app.service
      enabled: true
      contents: |
        [Service]
        ExecStart=/usr/bin/true
        [Install]
        WantedBy=multi-user.target
      dropins:
        - name: override.conf
          contents: |
            [Service]
            Environment=A=1
    - name: other.service
      mask: true
""")
case("1_0-link-without-target", """variant: fcos
version: 1.0.0
storage:
  links:
    - path: /etc/foo
  raid:
    - name: md0
      level: raid0
      devices: [/dev/sda, /dev/sdb]
""")
case("1_0-inline-and-source", """variant: fcos
version: 1.0.0
storage:
  files:
    - path: /etc/x
      contents:
        inline: a
        source: https://example.com/x
""")
case("1_0-inline-keeps-user-compression", """variant: fcos
version: 1.0.0
storage:
  files:
    - path: /etc/x
      contents:
        inline: "not really gzip, kept as written, percent-encoded: <>&"
        compression: gzip
    - path: /etc/y
      contents:
        inline: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
""")
case("1_0-ca-inline-unused-then-invalid", """variant: fcos
version: 1.0.0
ignition:
  security:
    tls:
      certificate_authorities:
        - inline: abc
""")
case("1_0-merge-inline-unused", """variant: fcos
version: 1.0.0
ignition:
  config:
    merge:
      - inline: '{"ignition": {"version": "3.0.0"}}'
        source: https://example.com/c.ign
""")
case("1_0-newer-keys-unused", """variant: fcos
version: 1.0.0
ignition:
  proxy:
    http_proxy: http://proxy
storage:
  files:
    - path: /etc/x
      contents:
        source: https://example.com/x
        http_headers:
          - name: A
            value: b
  filesystems:
    - device: /dev/sda
      format: ext4
      path: /var/x
      with_mount_unit: true
      mount_options: [noatime]
  trees:
    - local: tree
  luks:
    - name: l
      device: /dev/sdb
kernel_arguments:
  should_exist: [a]
""")
case("1_0-raid-without-level", """variant: fcos
version: 1.0.0
storage:
  raid:
    - name: md0
      devices: [/dev/sda, /dev/sdb]
""")
case("1_0-reserved-labels-warn", """variant: fcos
version: 1.0.0
storage:
  disks:
    - device: /dev/sda
      partitions:
        - label: root
          number: 5
        - label: boot
          number: 3
        - label: EFI-SYSTEM
        - label: BIOS-BOOT
          number: 2
        - label: PowerPC-PReP-boot
          number: 1
    - device: /dev/sdb
      wipe_table: true
      partitions:
        - label: root
          number: 1
""")
case("1_0-reserved-labels-strict", """variant: fcos
version: 1.0.0
storage:
  disks:
    - device: /dev/sda
      partitions:
        - label: root
          number: 1
""", args="-p -s")
case("1_0-decimal-modes", """variant: fcos
version: 1.0.0
storage:
  files:
    - path: /etc/a
      mode: 644
      contents:
        inline: a
        source: https://example.com/a
  directories:
    - path: /var/d
      mode: 755
""")
case("1_0-hash-sha256-not-yet", """variant: fcos
version: 1.0.0
storage:
  files:
    - path: /etc/a
      contents:
        source: https://example.com/a
        verification:
          hash: sha256-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
""")
case("1_0-gs-source-not-yet", """variant: fcos
version: 1.0.0
storage:
  files:
    - path: /etc/a
      contents:
        source: gs://bucket/object
""")

# --- 1.1.0 (base 0.2, Ignition 3.1.0)
case("1_1-local-tree-mount-units", """variant: fcos
version: 1.1.0
ignition:
  proxy:
    https_proxy: https://proxy.example.com
    no_proxy: [example.com]
  config:
    merge:
      - local: fragment.ign
  security:
    tls:
      certificate_authorities:
        - local: ca.pem
        - inline: |
            -----BEGIN CERTIFICATE-----
            MIIB
            -----END CERTIFICATE-----
storage:
  files:
    - path: /etc/local
      contents:
        local: plain.txt
    - path: /etc/compressible
      contents:
        local: repeat.txt
    - path: /usr/local/bin/tool
      mode: 0755
  trees:
    - local: tree
      path: /opt/tree
  filesystems:
    - device: /dev/disk/by-label/var
      format: xfs
      path: /var
      label: var
      with_mount_unit: true
      mount_options: [noatime, nodev]
    - device: /dev/disk/by-partlabel/srv
      format: ext4
      path: /srv
      with_mount_unit: true
""", args="-p -d files", files={
    "fragment.ign": '{"ignition": {"version": "3.1.0"}}\n',
    "ca.pem": "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n",
    "plain.txt": "hello local\n",
    "repeat.txt": "log line repeated\n" * 40,
    "tree/etc/app.conf": "key = value\n",
    "tree/bin/run": ("exec", "#!/bin/sh\nexec /usr/bin/app\n"),
    "tree/current": ("link", "etc/app.conf"),
    "tree/usr/local/bin/tool": ("exec", "#!/bin/sh\n"),
})
case("1_1-mount-unit-needs-path-and-format", """variant: fcos
version: 1.1.0
storage:
  filesystems:
    - device: /dev/sda
      with_mount_unit: true
    - device: /dev/sdb
      format: swap
      with_mount_unit: true
""")
case("1_1-swap-is-a-mount-unit-before-1_4", """variant: fcos
version: 1.1.0
storage:
  filesystems:
    - device: /dev/sdb
      format: swap
      path: /swap
      with_mount_unit: true
""")
case("1_1-headers-and-sha256", """variant: fcos
version: 1.1.0
storage:
  files:
    - path: /etc/a
      contents:
        source: https://example.com/a
        http_headers:
          - name: Authorization
            value: Bearer x
          - name: X-Empty
        verification:
          hash: sha256-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
""")
case("1_1-merge-inline-other-version-skipped", """variant: fcos
version: 1.1.0
ignition:
  config:
    merge:
      - inline: '{"ignition": {"version": "3.3.0"}}'
""")
case("1_1-two-sources-local-source", """variant: fcos
version: 1.1.0
storage:
  files:
    - path: /etc/a
      contents:
        local: a
        source: https://example.com/a
""", args="-p -d files", files={"a": "a"})
case("1_1-local-without-files-dir", """variant: fcos
version: 1.1.0
storage:
  files:
    - path: /etc/a
      contents:
        local: a
""")
case("1_1-tree-conflicts", """variant: fcos
version: 1.1.0
storage:
  files:
    - path: /etc/app.conf
      contents:
        inline: mine
  links:
    - path: /etc/x
      target: /y
  trees:
    - local: tree
      path: /etc
""", args="-p -d files", files={"tree/app.conf": "theirs\n", "tree/x": "x\n", "tree/other": "o\n"})
case("1_1-tree-overrides", """variant: fcos
version: 1.1.0
storage:
  files:
    - path: /etc/app.conf
      mode: 0600
      user:
        name: app
  links:
    - path: /etc/current
      overwrite: true
  trees:
    - local: tree
      path: /etc/
""", args="-p -d files", files={"tree/app.conf": "conf\n", "tree/current": ("link", "app.conf")})
case("1_1-gs-still-invalid", """variant: fcos
version: 1.1.0
storage:
  files:
    - path: /etc/a
      contents:
        source: gs://bucket/object
""")

# --- 1.2.0 (base 0.3, Ignition 3.2.0)
case("1_2-luks-tang-remote-mount", """variant: fcos
version: 1.2.0
storage:
  luks:
    - name: data
      device: /dev/sdb
      wipe_volume: true
      clevis:
        tang:
          - url: https://tang.example.com
            thumbprint: abc
        threshold: 1
    - name: tpm
      device: /dev/sdc
      clevis:
        tpm2: true
  filesystems:
    - device: /dev/mapper/data
      format: ext4
      path: /var/data
      with_mount_unit: true
      mount_options: [noatime]
    - device: /dev/disk/by-id/dm-name-data
      format: xfs
      path: /var/data2
      with_mount_unit: true
    - device: /dev/mapper/tpm
      format: xfs
      path: /var/tpm
      with_mount_unit: true
""")
case("1_2-should-exist-resize-gs", """variant: fcos
version: 1.2.0
passwd:
  users:
    - name: olduser
      should_exist: false
  groups:
    - name: oldgroup
      should_exist: false
storage:
  disks:
    - device: /dev/disk/by-id/coreos-boot-disk
      partitions:
        - number: 4
          label: root
          size_mib: 16384
          resize: true
  files:
    - path: /etc/a
      contents:
        source: gs://bucket/object
""")
case("1_2-clevis-custom", """variant: fcos
version: 1.2.0
storage:
  luks:
    - name: c
      device: /dev/sdb
      clevis:
        custom:
          pin: tpm2
          config: '{}'
          needs_network: false
""")
case("1_2-boot-device-unused", """variant: fcos
version: 1.2.0
boot_device:
  luks:
    tpm2: true
""")
case("1_2-luks-key-file-two-sources", """variant: fcos
version: 1.2.0
storage:
  luks:
    - name: c
      device: /dev/sdb
      key_file:
        inline: k
        source: https://example.com/k
""")

# --- 1.3.0 (boot_device, root partition checks)
for layout in ["x86_64", "aarch64", "ppc64le"]:
    case(f"1_3-boot-mirror-luks-{layout}", f"""variant: fcos
version: 1.3.0
boot_device:
  layout: {layout}
  luks:
    tpm2: true
    tang:
      - url: https://tang.example.com
        thumbprint: REPLACE
    threshold: 2
  mirror:
    devices:
      - /dev/sda
      - /dev/sdb
""")
case("1_3-boot-luks-tpm2-only", """variant: fcos
version: 1.3.0
boot_device:
  luks:
    tpm2: true
""")
case("1_3-boot-mirror-three-no-layout", """variant: fcos
version: 1.3.0
boot_device:
  mirror:
    devices: [/dev/vda, /dev/vdb, /dev/vdc]
""")
case("1_3-boot-mirror-one-device", """variant: fcos
version: 1.3.0
boot_device:
  layout: x86_64
  mirror:
    devices: [/dev/vda]
""")
case("1_3-boot-bad-layout", """variant: fcos
version: 1.3.0
boot_device:
  layout: s390x-eckd
  luks:
    tpm2: true
""")
case("1_3-boot-mirror-with-user-disks", """variant: fcos
version: 1.3.0
boot_device:
  layout: x86_64
  mirror:
    devices: [/dev/vda, /dev/vdb]
storage:
  disks:
    - device: /dev/vda
      partitions:
        - label: root-1
          size_mib: 8192
        - label: var-1
    - device: /dev/vdb
      partitions:
        - label: root-2
          size_mib: 8192
        - label: var-2
    - device: /dev/vdc
      wipe_table: true
      partitions:
        - label: data
  raid:
    - name: md-var
      level: raid1
      devices:
        - /dev/disk/by-partlabel/var-1
        - /dev/disk/by-partlabel/var-2
  filesystems:
    - device: /dev/md/md-var
      path: /var
      format: xfs
      wipe_filesystem: true
      with_mount_unit: true
    - device: /dev/md/md-root
      format: xfs
      label: myroot
""")
case("1_3-root-too-small-and-constrained", """variant: fcos
version: 1.3.0
storage:
  disks:
    - device: /dev/disk/by-id/coreos-boot-disk
      wipe_table: false
      partitions:
        - number: 4
          label: root
          size_mib: 4096
          resize: true
        - label: var
          size_mib: 0
    - device: /dev/sdb
      partitions:
        - number: 4
          label: root
        - label: after
""")
case("1_3-root-labels-wipe-table", """variant: fcos
version: 1.3.0
storage:
  disks:
    - device: /dev/sdb
      wipe_table: true
      partitions:
        - label: root
          size_mib: 10000
        - label: boot
""")
case("1_3-boot-device-with-user-luks-root", """variant: fcos
version: 1.3.0
boot_device:
  luks:
    tang:
      - url: http://tang
storage:
  luks:
    - name: root
      options: [--cipher, aes-cbc-essiv:sha256]
  filesystems:
    - device: /dev/mapper/root
      format: ext4
""")

# --- 1.4.0 (base 0.4, Ignition 3.3.0)
case("1_4-kargs-swap-link-target", """variant: fcos
version: 1.4.0
kernel_arguments:
  should_exist:
    - foo=bar
    - baz
  should_not_exist:
    - mitigations=auto,nosmt
storage:
  filesystems:
    - device: /dev/disk/by-partlabel/swap
      format: swap
      with_mount_unit: true
      mount_options: [pri=1]
  links:
    - path: /etc/none
""")
case("1_4-kargs-conflict", """variant: fcos
version: 1.4.0
kernel_arguments:
  should_exist: [a]
  should_not_exist: [a]
""")
case("1_4-format-none-and-mirror-luks", """variant: fcos
version: 1.4.0
boot_device:
  layout: aarch64
  luks:
    tang:
      - url: https://tang.example.com
        thumbprint: t
  mirror:
    devices: [/dev/vda, /dev/vdb]
storage:
  filesystems:
    - device: /dev/vdc
      format: none
""")
case("1_4-arn-not-yet", """variant: fcos
version: 1.4.0
storage:
  files:
    - path: /etc/a
      contents:
        source: arn:aws:s3:::bucket/key
""")

# --- 1.5.0 (base 0.5, grub, luks discard)
case("1_5-grub-users", """variant: fcos
version: 1.5.0
grub:
  users:
    - name: root
      password_hash: grub.pbkdf2.sha512.10000.874A958E526409
    - name: admin
      password_hash: grub.pbkdf2.sha512.10000.AAAA
""")
case("1_5-grub-missing-fields", """variant: fcos
version: 1.5.0
grub:
  users:
    - password_hash: x
    - name: nopass
    - name: ""
      password_hash: ""
""")
case("1_5-grub-with-boot-mirror-and-user-files", """variant: fcos
version: 1.5.0
boot_device:
  layout: x86_64
  luks:
    discard: true
    tpm2: true
  mirror:
    devices: [/dev/vda, /dev/vdb]
grub:
  users:
    - name: root
      password_hash: grub.pbkdf2.sha512.10000.874A958E526409
storage:
  files:
    - path: /etc/hostname
      contents:
        inline: h
  filesystems:
    - device: /dev/vdc
      format: ext4
      path: /var/srv
""")
case("1_5-grub-user-cfg-conflict", """variant: fcos
version: 1.5.0
grub:
  users:
    - name: root
      password_hash: grub.pbkdf2.sha512.10000.874A958E526409
storage:
  directories:
    - path: /boot/grub2/user.cfg
  filesystems:
    - device: /dev/disk/by-label/boot
      format: ext4
      label: boot
""")
case("1_5-local-units-and-keys", """variant: fcos
version: 1.5.0
passwd:
  users:
    - name: core
      ssh_authorized_keys_local: [keys.pub]
systemd:
  units:
    - name: app.service
      contents_local: app.service
      dropins:
        - name: a.conf
          contents_local: a.conf
    - name: both.service
      contents: x
      contents_local: app.service
""", args="-p -d files", files={
    "keys.pub": "ssh-ed25519 AAAA one\r\n\nssh-rsa BBBB two\n",
    "app.service": "[Unit]\nDescription=App\n",
    "a.conf": "[Service]\n",
})
case("1_5-arn-and-luks-open-options", """variant: fcos
version: 1.5.0
storage:
  files:
    - path: /etc/a
      contents:
        source: arn:aws:s3:us-west-2:123456789012:accesspoint/test/object/some/path
  luks:
    - name: data
      device: /dev/sdb
      discard: true
      open_options: [--allow-discards]
      key_file:
        inline: secret
""")
case("1_5-tang-advertisement", """variant: fcos
version: 1.5.0
storage:
  luks:
    - name: data
      device: /dev/sdb
      clevis:
        tang:
          - url: https://tang.example.com
            thumbprint: abc
            advertisement: '{"payload": "x"}'
""")
