//! VMware's backdoor: guest-to-host RPC over I/O port 0x5658 (the "message" channel of
//! open-vm-tools), carrying RPCI commands such as `info-get guestinfo.KEY`.
//!
//! The channel logic works on [`Port`], one register exchange per `in` instruction, so that
//! it is tested against a simulated host ([`tests`]); [`HostPort`] is the real one (x86-64,
//! only used after CPUID said VMware: elsewhere the instruction would fault). Only the
//! low-bandwidth transfer (4 bytes per exchange) is used: every VMware host offers it.

/// The registers of one backdoor exchange.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Regs {
    pub ax: u32,
    pub bx: u32,
    pub cx: u32,
    pub dx: u32,
    pub si: u32,
    pub di: u32,
}

pub(crate) const MAGIC: u32 = 0x564D_5868;
pub(crate) const PORT: u16 = 0x5658;
const CMD_GETVERSION: u16 = 10;
const CMD_MESSAGE: u16 = 30;
/// The RPCI protocol ("RPCI" little-endian) and the cookie flag.
pub(crate) const PROTO_RPCI: u32 = 0x4943_5052;
const FLAG_COOKIE: u32 = 0x8000_0000;

const TYPE_OPEN: u16 = 0;
const TYPE_SENDSIZE: u16 = 1;
const TYPE_SENDPAYLOAD: u16 = 2;
const TYPE_RECVSIZE: u16 = 3;
const TYPE_RECVPAYLOAD: u16 = 4;
const TYPE_RECVSTATUS: u16 = 5;
const TYPE_CLOSE: u16 = 6;

const STATUS_SUCCESS: u16 = 0x0001;
const STATUS_DORECV: u16 = 0x0002;
const STATUS_CHECKPOINT: u16 = 0x0010;

/// One `in` on the backdoor port: `regs` in, registers out.
pub(crate) trait Port {
    fn exchange(&mut self, regs: Regs) -> Regs;
}

fn high(v: u32) -> u16 {
    (v >> 16) as u16
}

/// An open message channel.
pub(crate) struct Channel<'a, P: Port> {
    port: &'a mut P,
    id: u16,
    cookie: (u32, u32),
}

impl<'a, P: Port> Channel<'a, P> {
    fn regs(&self, kind: u16, bx: u32) -> Regs {
        Regs {
            ax: MAGIC,
            bx,
            cx: (u32::from(kind) << 16) | u32::from(CMD_MESSAGE),
            dx: (u32::from(self.id) << 16) | u32::from(PORT),
            si: self.cookie.0,
            di: self.cookie.1,
        }
    }

    /// Opens an RPCI channel (with cookies when the host takes them).
    pub(crate) fn open(port: &'a mut P) -> Result<Self, String> {
        for flags in [FLAG_COOKIE, 0] {
            let out = port.exchange(Regs {
                ax: MAGIC,
                bx: PROTO_RPCI | flags,
                cx: (u32::from(TYPE_OPEN) << 16) | u32::from(CMD_MESSAGE),
                dx: u32::from(PORT),
                si: 0,
                di: 0,
            });
            if high(out.cx) & STATUS_SUCCESS != 0 {
                return Ok(Channel {
                    port,
                    id: high(out.dx),
                    cookie: (out.si, out.di),
                });
            }
        }
        Err("could not open the backdoor channel".into())
    }

    /// Sends one message.
    pub(crate) fn send(&mut self, msg: &[u8]) -> Result<(), String> {
        let out = self
            .port
            .exchange(self.regs(TYPE_SENDSIZE, msg.len() as u32));
        if high(out.cx) & STATUS_SUCCESS == 0 {
            return Err("unable to send an RPCI command".into());
        }
        for chunk in msg.chunks(4) {
            let mut word = [0u8; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            let out = self
                .port
                .exchange(self.regs(TYPE_SENDPAYLOAD, u32::from_le_bytes(word)));
            if high(out.cx) & STATUS_SUCCESS == 0 {
                return Err("unable to send an RPCI command".into());
            }
        }
        Ok(())
    }

    /// Receives the host's reply (empty when there is none).
    pub(crate) fn receive(&mut self) -> Result<Vec<u8>, String> {
        'retry: loop {
            let out = self.port.exchange(self.regs(TYPE_RECVSIZE, 0));
            if high(out.cx) & STATUS_SUCCESS == 0 {
                return Err("unable to poll for the RPCI reply".into());
            }
            if high(out.cx) & STATUS_DORECV == 0 {
                return Ok(Vec::new());
            }
            if high(out.dx) != TYPE_SENDSIZE {
                return Err("protocol error: expected the reply's size".into());
            }
            let mut left = out.bx as usize;
            let mut buf = Vec::with_capacity(left);
            while left > 0 {
                let out = self
                    .port
                    .exchange(self.regs(TYPE_RECVPAYLOAD, u32::from(STATUS_SUCCESS)));
                if high(out.cx) & STATUS_SUCCESS == 0 {
                    if high(out.cx) & STATUS_CHECKPOINT != 0 {
                        continue 'retry;
                    }
                    self.port.exchange(self.regs(TYPE_RECVSTATUS, 0));
                    return Err("unable to receive the RPCI reply".into());
                }
                if high(out.dx) != TYPE_SENDPAYLOAD {
                    self.port.exchange(self.regs(TYPE_RECVSTATUS, 0));
                    return Err("protocol error: expected reply data".into());
                }
                let n = left.min(4);
                buf.extend_from_slice(&out.bx.to_le_bytes()[..n]);
                left -= n;
            }
            self.port
                .exchange(self.regs(TYPE_RECVSTATUS, u32::from(STATUS_SUCCESS)));
            return Ok(buf);
        }
    }

    pub(crate) fn close(self) -> Result<(), String> {
        let out = self.port.exchange(self.regs(TYPE_CLOSE, 0));
        if high(out.cx) & STATUS_SUCCESS == 0 {
            return Err("could not close the backdoor channel".into());
        }
        Ok(())
    }
}

/// One RPCI command: its reply's success flag and text (`"1 value"` / `"0 No value found"`).
pub(crate) fn rpci<P: Port>(port: &mut P, command: &str) -> Result<(bool, String), String> {
    let mut ch = Channel::open(port)?;
    let r = ch.send(command.as_bytes()).and_then(|()| ch.receive());
    let _ = ch.close();
    let reply = r?;
    let text = String::from_utf8_lossy(&reply).into_owned();
    let ok = text.starts_with('1');
    let rest = text.get(2..).unwrap_or("").to_string();
    Ok((ok, rest))
}

/// Whether the backdoor answers (the GETVERSION command echoes the magic in bx).
pub(crate) fn present<P: Port>(port: &mut P) -> bool {
    let out = port.exchange(Regs {
        ax: MAGIC,
        bx: !MAGIC,
        cx: u32::from(CMD_GETVERSION),
        dx: u32::from(PORT),
        si: 0,
        di: 0,
    });
    out.bx == MAGIC
}

/// Whether CPUID names VMware as the hypervisor (checked before any port I/O).
pub(crate) fn cpuid_says_vmware() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let leaf1 = std::arch::x86_64::__cpuid(1);
        if leaf1.ecx & (1 << 31) == 0 {
            return false;
        }
        // The hypervisor leaf is defined when bit 31 is set.
        let h = std::arch::x86_64::__cpuid(0x4000_0000);
        let mut v = Vec::with_capacity(12);
        for r in [h.ebx, h.ecx, h.edx] {
            v.extend_from_slice(&r.to_le_bytes());
        }
        v == b"VMwareVMware"
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The real backdoor port. Only constructed after [`cpuid_says_vmware`].
pub(crate) struct HostPort(());

impl HostPort {
    pub(crate) fn new() -> Option<HostPort> {
        cpuid_says_vmware().then_some(HostPort(()))
    }
}

impl Port for HostPort {
    #[cfg(target_arch = "x86_64")]
    fn exchange(&mut self, r: Regs) -> Regs {
        let (mut ax, mut bx, mut cx, mut dx, mut si, mut di) =
            (r.ax, u64::from(r.bx), r.cx, r.dx, r.si, r.di);
        // SAFETY: VMware's hypervisor intercepts `in` on its backdoor port from any
        // privilege level (HostPort exists only when CPUID says VMware). rbx is reserved
        // by LLVM, so bx travels through another register.
        unsafe {
            std::arch::asm!(
                "xchg {bx}, rbx",
                "in eax, dx",
                "xchg {bx}, rbx",
                bx = inout(reg) bx,
                inout("eax") ax,
                inout("ecx") cx,
                inout("edx") dx,
                inout("esi") si,
                inout("edi") di,
                options(nostack),
            );
        }
        Regs {
            ax,
            bx: bx as u32,
            cx,
            dx,
            si,
            di,
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn exchange(&mut self, r: Regs) -> Regs {
        r
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A simulated VMware host: the message channel's state machine and guestinfo
    /// variables, answering as the hypervisor does. It also records every RPCI command.
    #[derive(Default)]
    pub(crate) struct FakeHost {
        pub vars: HashMap<String, String>,
        pub commands: Vec<String>,
        open: bool,
        incoming: Vec<u8>,
        expect: usize,
        reply: Vec<u8>,
        sent: usize,
    }

    const OK: u32 = (STATUS_SUCCESS as u32) << 16;

    impl FakeHost {
        fn handle(&mut self, cmd: &str) -> String {
            self.commands.push(cmd.to_string());
            if let Some(k) = cmd.strip_prefix("info-get guestinfo.") {
                match self.vars.get(k) {
                    Some(v) => format!("1 {v}"),
                    None => "0 No value found".into(),
                }
            } else if let Some(rest) = cmd.strip_prefix("info-set guestinfo.") {
                let (k, v) = rest.split_once(' ').unwrap_or((rest, ""));
                self.vars.insert(k.to_string(), v.to_string());
                "1 ".into()
            } else {
                "0 Unknown command".into()
            }
        }
    }

    impl Port for FakeHost {
        fn exchange(&mut self, r: Regs) -> Regs {
            assert_eq!(r.ax, MAGIC);
            assert_eq!(r.dx & 0xffff, u32::from(PORT));
            let mut out = r;
            if r.cx & 0xffff == u32::from(CMD_GETVERSION) {
                out.bx = MAGIC;
                return out;
            }
            assert_eq!(r.cx & 0xffff, u32::from(CMD_MESSAGE));
            let kind = high(r.cx);
            if kind != TYPE_OPEN {
                assert!(self.open, "message on a closed channel");
                assert_eq!((r.si, r.di), (0x1234, 0x5678), "cookies");
                assert_eq!(high(r.dx), 7, "channel id");
            }
            match kind {
                TYPE_OPEN => {
                    assert_eq!(r.bx & !FLAG_COOKIE, PROTO_RPCI);
                    self.open = true;
                    out.cx = OK;
                    out.dx = 7 << 16;
                    out.si = 0x1234;
                    out.di = 0x5678;
                }
                TYPE_SENDSIZE => {
                    self.expect = r.bx as usize;
                    self.incoming.clear();
                    out.cx = OK;
                    if self.expect == 0 {
                        let cmd = String::new();
                        self.reply = self.handle(&cmd).into_bytes();
                    }
                }
                TYPE_SENDPAYLOAD => {
                    let n = (self.expect - self.incoming.len()).min(4);
                    self.incoming.extend_from_slice(&r.bx.to_le_bytes()[..n]);
                    if self.incoming.len() == self.expect {
                        let cmd = String::from_utf8(self.incoming.clone()).unwrap();
                        self.reply = self.handle(&cmd).into_bytes();
                        self.sent = 0;
                    }
                    out.cx = OK;
                }
                TYPE_RECVSIZE => {
                    out.cx = OK | ((STATUS_DORECV as u32) << 16);
                    out.dx = u32::from(TYPE_SENDSIZE) << 16;
                    out.bx = self.reply.len() as u32;
                }
                TYPE_RECVPAYLOAD => {
                    let mut w = [0u8; 4];
                    let end = (self.sent + 4).min(self.reply.len());
                    w[..end - self.sent].copy_from_slice(&self.reply[self.sent..end]);
                    self.sent = end;
                    out.bx = u32::from_le_bytes(w);
                    out.cx = OK;
                    out.dx = u32::from(TYPE_SENDPAYLOAD) << 16;
                }
                TYPE_RECVSTATUS => out.cx = OK,
                TYPE_CLOSE => {
                    self.open = false;
                    out.cx = OK;
                }
                other => panic!("unknown message type {other}"),
            }
            out
        }
    }

    #[test]
    fn rpci_round_trips_over_the_channel() {
        let mut host = FakeHost::default();
        host.vars
            .insert("ignition.config.data".into(), "eyJhIjoxfQ==".into());
        assert!(present(&mut host));
        assert_eq!(
            rpci(&mut host, "info-get guestinfo.ignition.config.data").unwrap(),
            (true, "eyJhIjoxfQ==".into())
        );
        assert_eq!(
            rpci(&mut host, "info-get guestinfo.nope").unwrap(),
            (false, "No value found".into())
        );
        // Odd lengths travel intact both ways.
        for v in ["a", "ab", "abc", "abcde"] {
            rpci(&mut host, &format!("info-set guestinfo.k {v}")).unwrap();
            assert_eq!(rpci(&mut host, "info-get guestinfo.k").unwrap().1, v);
        }
    }
}
