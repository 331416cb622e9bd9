//! Address ranges in CIDR notation (`10.0.0.0/8`, `::1/128`), for `server.allow_clients`.

use std::net::IpAddr;

/// One address range: the addresses whose first `prefix` bits are those of `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    base: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `ADDR/PREFIX`, or a bare address (the range of that address alone). Host bits
    /// set in `ADDR` are refused: `10.0.0.1/8` more likely means a typo than `10.0.0.0/8`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let base: IpAddr = addr
            .parse()
            .map_err(|_| format!("{s:?} is not an address range like \"10.0.0.0/8\""))?;
        let max = Self::bits(base);
        let prefix = match prefix {
            None => max,
            Some(p) => match p.parse::<u8>() {
                Ok(n) if n <= max => n,
                _ => return Err(format!("{s:?}: the prefix length must be 0 to {max}")),
            },
        };
        let c = Cidr { base, prefix };
        if c.masked(base) != Self::value(base) {
            return Err(format!(
                "{s:?} has bits set past its /{prefix} prefix (did you mean {}/{prefix}?)",
                Self::from_value(base, c.masked(base))
            ));
        }
        Ok(c)
    }

    /// Whether `ip` lies in the range. An IPv4 address seen as IPv6 (`::ffff:10.1.2.3`, as a
    /// dual-stack listener reports IPv4 peers) counts as the IPv4 address.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        ip.is_ipv4() == self.base.is_ipv4() && self.masked(ip) == Self::value(self.base)
    }

    fn bits(ip: IpAddr) -> u8 {
        if ip.is_ipv4() {
            32
        } else {
            128
        }
    }

    fn value(ip: IpAddr) -> u128 {
        match ip {
            IpAddr::V4(v) => u32::from(v) as u128,
            IpAddr::V6(v) => u128::from(v),
        }
    }

    fn from_value(like: IpAddr, v: u128) -> IpAddr {
        match like {
            IpAddr::V4(_) => IpAddr::V4((v as u32).into()),
            IpAddr::V6(_) => IpAddr::V6(v.into()),
        }
    }

    /// `ip` with the bits past the prefix cleared.
    fn masked(&self, ip: IpAddr) -> u128 {
        let host_bits = u32::from(Self::bits(ip) - self.prefix.min(Self::bits(ip)));
        let mask = u128::MAX.checked_shl(host_bits).unwrap_or(0);
        Self::value(ip) & mask
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.base, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    #[test]
    fn ranges_hold_their_addresses_only() {
        let ten = Cidr::parse("10.0.0.0/8").expect("valid");
        assert!(ten.contains(ip("10.255.1.2")));
        assert!(!ten.contains(ip("11.0.0.1")));
        assert!(ten.contains(ip("::ffff:10.1.2.3")), "IPv4-mapped IPv6");
        assert!(!ten.contains(ip("::1")));
        let one = Cidr::parse("192.168.1.7/32").expect("valid");
        assert!(one.contains(ip("192.168.1.7")) && !one.contains(ip("192.168.1.8")));
        assert_eq!(Cidr::parse("192.168.1.7").ok(), Some(one), "a bare address");
        let v6 = Cidr::parse("::1/128").expect("valid");
        assert!(v6.contains(ip("::1")) && !v6.contains(ip("::2")));
        assert!(!v6.contains(ip("127.0.0.1")));
        let all = Cidr::parse("0.0.0.0/0").expect("valid");
        assert!(all.contains(ip("8.8.8.8")) && !all.contains(ip("2001:db8::1")));
        assert!(Cidr::parse("fd00::/8")
            .expect("valid")
            .contains(ip("fd12::1")));
        assert_eq!(ten.to_string(), "10.0.0.0/8");
    }

    #[test]
    fn bad_ranges_say_why() {
        for (bad, needle) in [
            ("10.0.0.0/33", "0 to 32"),
            ("::/129", "0 to 128"),
            ("10.0.0.0/x", "prefix"),
            ("ten/8", "not an address range"),
            ("", "not an address range"),
            ("10.0.0.1/8", "did you mean 10.0.0.0/8"),
        ] {
            let err = Cidr::parse(bad).expect_err(bad);
            assert!(err.contains(needle), "{bad}: {err}");
        }
    }
}
