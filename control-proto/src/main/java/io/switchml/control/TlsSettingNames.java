package io.switchml.control;

/**
 * What a client calls its TLS files, so that an error about the TLS handshake names the setting to
 * change: a worker's {@code switchml.tlsCa} ..., {@code switchml ctl --tls-ca} ..., a leaf's
 * {@code --spine-tls-ca} ....
 */
public record TlsSettingNames(String ca, String certificate, String key) {
    /** {@code switchml ctl}'s options. */
    public static final TlsSettingNames CTL = new TlsSettingNames("--tls-ca", "--tls-cert", "--tls-key");
    /** A leaf switch's options for its spine. */
    public static final TlsSettingNames SPINE = new TlsSettingNames("--spine-tls-ca", "--spine-tls-cert", "--spine-tls-key");
}
