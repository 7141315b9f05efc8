//! TLS failures told apart. librdkafka says "certificate verify failed" for a broker certificate of an unknown CA
//! and for one that does not name the host alike, and only "alert bad certificate" when the broker refuses the
//! client's certificate. So: the client certificate's dates are checked before a client is created (the broker
//! refuses an expired one with no word of its dates); a failed verification of the broker's certificate is
//! repeated once by the engine with the same CA file and host check, which gives OpenSSL's own reason and the
//! certificate's names; and an alert about the client certificate is turned into what to change.

use std::collections::BTreeMap;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openssl::asn1::Asn1Time;
use openssl::ssl::{HandshakeError, SslConnector, SslMethod, SslVerifyMode};
use openssl::x509::{X509Ref, X509VerifyResult, X509};

use crate::echo::clip;
use crate::error::EngineError;

/// The repeated handshake's bound: it runs once, on a setup that failed already.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The TLS files and checks of a client, for explaining its failures.
#[derive(Clone, Debug, Default)]
pub struct Files {
    ca: Option<String>,
    certificate: Option<String>,
    verify_host: bool,
}

impl Files {
    /// The TLS settings of a client that uses TLS (security.protocol SSL or SASL_SSL), else None.
    pub fn of(props: &BTreeMap<String, String>) -> Option<Files> {
        let get = |k: &str| props.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        if !get("security.protocol")?.to_ascii_uppercase().ends_with("SSL") {
            return None;
        }
        Some(Files {
            // "probe" asks librdkafka for the system's CA store, as no setting does
            ca: get("ssl.ca.location").filter(|v| *v != "probe").map(str::to_string),
            certificate: get("ssl.certificate.location").map(str::to_string),
            verify_host: get("ssl.endpoint.identification.algorithm").is_none_or(|v| !v.eq_ignore_ascii_case("none")),
        })
    }

    /// Refuses a client certificate that is expired or not yet valid, with its dates: the broker would refuse
    /// it with a bare alert.
    pub fn check_dates(&self) -> Result<(), EngineError> {
        let Some(cert) = self.certificate.as_deref().and_then(read_certificate) else { return Ok(()) };
        let Ok(now) = Asn1Time::days_from_now(0) else { return Ok(()) };
        let file = clip(self.certificate.as_deref().unwrap_or_default());
        if cert.not_after() < now {
            return Err(EngineError::config(format!(
                "ssl.certificate.location: the client certificate '{file}' ({}) expired on {}; the broker refuses it: use a renewed certificate",
                describe(&cert),
                cert.not_after()
            )));
        }
        if cert.not_before() > now {
            return Err(EngineError::config(format!(
                "ssl.certificate.location: the client certificate '{file}' ({}) is not valid before {}; the broker refuses it until then: use a certificate valid now, or check this machine's clock",
                describe(&cert),
                cert.not_before()
            )));
        }
        Ok(())
    }

    /// `err` with what went wrong in TLS terms and what to change, when librdkafka's text is a TLS failure that
    /// is known here; else `err` as it is.
    pub fn explain(&self, err: EngineError) -> EngineError {
        let said = err.message.clone();
        let why = if said.contains("certificate verify failed") {
            broker_address(&said).and_then(|(host, port)| self.verify_broker(&host, port))
        } else if said.contains("alert certificate required") {
            Some(NO_CLIENT_CERTIFICATE.to_string())
        } else {
            CLIENT_CERTIFICATE_ALERTS.iter().find(|a| said.contains(*a)).map(|alert| self.refused_certificate(alert))
        };
        match why {
            Some(why) => EngineError::named("SSL".to_string(), format!("{why} (librdkafka: {said})")),
            None => err,
        }
    }

    fn refused_certificate(&self, alert: &str) -> String {
        // A Kafka broker (Java's TLS) answers a missing client certificate with "bad certificate", not TLS 1.3's
        // "certificate required": with none configured, the fix is to configure one.
        let Some(file) = &self.certificate else { return NO_CLIENT_CERTIFICATE.to_string() };
        let what = read_certificate(file).map(|c| format!(" ({})", describe(&c))).unwrap_or_default();
        let file = format!(" '{}'", clip(file));
        format!(
            "the broker refused the client certificate (ssl.certificate.location{file}{what}; TLS {alert}): the broker \
             does not trust the CA that signed it, or finds it revoked or not made for client authentication; use a \
             certificate signed by a CA in the broker's trust store (its ssl.truststore.location); the broker's log says which"
        )
    }

    /// Repeats the verification of the broker's certificate, as librdkafka made it (the same CA file, the same host
    /// check), and says what OpenSSL found wrong. None when the repeated handshake shows nothing (the broker is
    /// gone, or it verifies now).
    fn verify_broker(&self, host: &str, port: u16) -> Option<String> {
        let mut builder = SslConnector::builder(SslMethod::tls_client()).ok()?;
        match &self.ca {
            Some(ca) => builder.set_ca_file(ca).ok()?,
            None => builder.set_default_verify_paths().ok()?,
        }
        let connector = builder.build();
        let mut config = connector.configure().ok()?;
        config.set_verify_hostname(self.verify_host);
        // The first complaint, and the broker's own certificate (the chain's first) whatever its depth.
        let found: Arc<Mutex<Option<(X509VerifyResult, X509)>>> = Arc::default();
        let seen = Arc::clone(&found);
        config.set_verify_callback(SslVerifyMode::PEER, move |ok, ctx| {
            let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
            if !ok && seen.is_none() {
                let leaf = ctx.chain().and_then(|c| c.get(0)).or(ctx.current_cert());
                if let Some(cert) = leaf {
                    *seen = Some((ctx.error(), cert.to_owned()));
                }
            }
            ok
        });
        let addr = (host, port).to_socket_addrs().ok()?.next()?;
        let stream = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT).ok()?;
        stream.set_read_timeout(Some(PROBE_TIMEOUT)).ok()?;
        stream.set_write_timeout(Some(PROBE_TIMEOUT)).ok()?;
        match config.connect(host, stream) {
            Err(HandshakeError::Failure(_)) => {}
            _ => return None,
        }
        let (error, cert) = found.lock().unwrap_or_else(|p| p.into_inner()).take()?;
        let ca = match &self.ca {
            Some(ca) => format!("ssl.ca.location ('{}')", clip(ca)),
            None => "the system's CA store (ssl.ca.location is not set)".to_string(),
        };
        Some(match error.as_raw() {
            // the issuer is not in the CA file (unknown CA), or the chain ends in a self-signed one that is not
            openssl_sys::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT
            | openssl_sys::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
            | openssl_sys::X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
            | openssl_sys::X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
            | openssl_sys::X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE => format!(
                "the broker's certificate ({}) is signed by a CA that {ca} does not hold (unknown CA: {}): set ssl.ca.location to a PEM file with the CA that signed the broker's certificate",
                describe(&cert),
                error.error_string()
            ),
            openssl_sys::X509_V_ERR_HOSTNAME_MISMATCH | openssl_sys::X509_V_ERR_IP_ADDRESS_MISMATCH => format!(
                "the broker's certificate does not name {host}, the address the client connected to (hostname mismatch: it names {}): connect with a name the certificate names (bootstrap.servers, and the broker's advertised.listeners), or have the broker's certificate issued for {host}; ssl.endpoint.identification.algorithm=none turns the check off",
                names(&cert)
            ),
            openssl_sys::X509_V_ERR_CERT_HAS_EXPIRED => format!(
                "the broker's certificate ({}) expired on {}: the broker needs a renewed certificate (or this machine's clock is wrong)",
                describe(&cert),
                cert.not_after()
            ),
            openssl_sys::X509_V_ERR_CERT_NOT_YET_VALID => format!(
                "the broker's certificate ({}) is not valid before {}: check this machine's clock",
                describe(&cert),
                cert.not_before()
            ),
            _ => format!(
                "the broker's certificate ({}) could not be verified with {ca}: {}",
                describe(&cert),
                error.error_string()
            ),
        })
    }
}

/// What to change when the broker wants a client certificate and the connection has none.
const NO_CLIENT_CERTIFICATE: &str = "the broker requires a client certificate (its listener has ssl.client.auth=required) and got none: set ssl.certificate.location and ssl.key.location";

/// The alerts (OpenSSL's words) a broker sends when it refuses the client's certificate.
const CLIENT_CERTIFICATE_ALERTS: &[&str] = &[
    "alert bad certificate",
    "alert certificate unknown",
    "alert unknown ca",
    "alert certificate expired",
    "alert certificate revoked",
    "alert unsupported certificate",
];

/// The broker librdkafka was talking to, from its message ("ssl://host:port/1: SSL handshake failed ...").
fn broker_address(message: &str) -> Option<(String, u16)> {
    let at = message.find("ssl://")? + "ssl://".len();
    let address = message[at..].split('/').next()?;
    let (host, port) = address.rsplit_once(':')?;
    Some((host.trim_start_matches('[').trim_end_matches(']').to_string(), port.parse().ok()?))
}

/// The first certificate of a PEM file, None when it cannot be read (librdkafka then says why).
fn read_certificate(file: &str) -> Option<X509> {
    let pem =
        crate::files::read(file, "ssl.certificate.location", crate::files::Limit::fixed(crate::files::MAX_CERTIFICATE))
            .ok()?;
    X509::from_pem(&pem).ok()
}

/// "subject CN=a, issued by CN=b"
fn describe(cert: &X509Ref) -> String {
    format!("subject {}, issued by {}", dn(cert.subject_name()), dn(cert.issuer_name()))
}

fn dn(name: &openssl::x509::X509NameRef) -> String {
    let parts: Vec<String> = name
        .entries()
        .map(|e| {
            let key = e.object().nid().short_name().unwrap_or("?");
            let value = e.data().to_string().unwrap_or_default();
            format!("{key}={value}")
        })
        .collect();
    clip(&parts.join(", "))
}

/// The names a certificate is valid for: its subject alternative names, else its common name.
fn names(cert: &X509Ref) -> String {
    let listed: Vec<String> = cert
        .subject_alt_names()
        .map(|sans| {
            sans.iter()
                .filter_map(|n| {
                    n.dnsname().map(|d| format!("DNS:{d}")).or_else(|| {
                        n.ipaddress().and_then(|ip| match ip.len() {
                            4 => Some(format!("IP:{}", std::net::Ipv4Addr::from(<[u8; 4]>::try_from(ip).ok()?))),
                            16 => Some(format!("IP:{}", std::net::Ipv6Addr::from(<[u8; 16]>::try_from(ip).ok()?))),
                            _ => None,
                        })
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    if listed.is_empty() {
        dn(cert.subject_name())
    } else {
        clip(&listed.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_broker_is_read_from_librdkafkas_message() {
        let m = "ssl://127.0.0.2:15199/bootstrap: SSL handshake failed: error:0A000086:SSL routines::certificate verify failed";
        assert_eq!(broker_address(m), Some(("127.0.0.2".to_string(), 15199)));
        assert_eq!(broker_address("sasl_ssl://[::1]:9093/1: x"), Some(("::1".to_string(), 9093)));
        assert_eq!(broker_address("no address"), None);
    }

    #[test]
    fn only_tls_clients_have_files_and_the_host_check_is_on_by_default() {
        let props = |items: &[(&str, &str)]| -> BTreeMap<String, String> {
            items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        assert!(Files::of(&props(&[("security.protocol", "SASL_PLAINTEXT")])).is_none());
        let f = Files::of(&props(&[("security.protocol", "ssl"), ("ssl.ca.location", "probe")])).unwrap();
        assert!(f.verify_host && f.ca.is_none());
        let f =
            Files::of(&props(&[("security.protocol", "SASL_SSL"), ("ssl.endpoint.identification.algorithm", "none")]))
                .unwrap();
        assert!(!f.verify_host);
    }

    #[test]
    fn an_alert_about_the_client_certificate_says_what_to_change() {
        let files = Files { certificate: Some("/nonexistent/client.pem".into()), ..Files::default() };
        let e = files.explain(EngineError::named(
            "TRANSPORT".into(),
            "ssl://b:1/bootstrap: Receive failed: error:0A000412:SSL routines::ssl/tls alert bad certificate: SSL alert number 42",
        ));
        assert_eq!(e.code, "SSL");
        assert!(e.message.starts_with("the broker refused the client certificate (ssl.certificate.location '/nonexistent/client.pem'; TLS alert bad certificate)"), "{}", e.message);
        let other = EngineError::named("TRANSPORT".into(), "Connection refused");
        assert_eq!(files.explain(other.clone()), other);
    }
}
