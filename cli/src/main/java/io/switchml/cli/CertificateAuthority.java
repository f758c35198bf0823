package io.switchml.cli;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;

/**
 * A throwaway certificate authority for a test deployment: its own certificate, and certificates it
 * signs for a controller (server) and for clients (workers, ctl). EC P-256 keys, written as PEM, the
 * keys PKCS#8 and readable by their owner only. For production, use the organisation's CA.
 */
final class CertificateAuthority {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String SIGNATURE = "SHA256withECDSA";

    private final KeyPair keys;
    private final X509Certificate certificate;
    private final Duration validity;

    private CertificateAuthority(KeyPair keys, X509Certificate certificate, Duration validity) {
        this.keys = keys;
        this.certificate = certificate;
        this.validity = validity;
    }

    /** A fresh CA named {@code name}, valid for {@code validity} from now. */
    static CertificateAuthority create(String name, Duration validity) {
        KeyPair keys = newKeys();
        X500Name subject = new X500Name("CN=" + name);
        Instant now = Instant.now();
        X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, serial(), Date.from(now.minusSeconds(60)),
                Date.from(now.plus(validity)), subject, keys.getPublic());
        try {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        } catch (CertIOException e) {
            throw new IllegalStateException("cannot build the CA certificate: " + e.getMessage(), e);
        }
        return new CertificateAuthority(keys, sign(builder, keys), validity);
    }

    X509Certificate certificate() {
        return certificate;
    }

    /**
     * A server certificate for these host names and IP addresses (its subject alternative names,
     * which clients check), signed by this CA.
     */
    Issued server(String commonName, List<String> hosts) {
        List<GeneralName> names = new ArrayList<>();
        for (String host : hosts) {
            names.add(new GeneralName(host.matches("[0-9.]+|.*:.*") ? GeneralName.iPAddress : GeneralName.dNSName, host));
        }
        return issue(commonName, KeyPurposeId.id_kp_serverAuth, names);
    }

    /** A client certificate (for mutual TLS), signed by this CA. */
    Issued client(String commonName) {
        return issue(commonName, KeyPurposeId.id_kp_clientAuth, List.of());
    }

    private Issued issue(String commonName, KeyPurposeId purpose, List<GeneralName> names) {
        KeyPair subjectKeys = newKeys();
        Instant now = Instant.now();
        X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(certificate, serial(),
                Date.from(now.minusSeconds(60)), Date.from(now.plus(validity)), new X500Name("CN=" + commonName),
                subjectKeys.getPublic());
        try {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
            builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
            if (!names.isEmpty()) {
                builder.addExtension(Extension.subjectAlternativeName, false,
                        new GeneralNames(names.toArray(GeneralName[]::new)));
            }
        } catch (CertIOException e) {
            throw new IllegalStateException("cannot build the certificate of " + commonName + ": " + e.getMessage(), e);
        }
        return new Issued(subjectKeys, sign(builder, keys));
    }

    /** Writes this CA's certificate and key as {@code name.pem} and {@code name-key.pem}. */
    void write(Path dir, String name) throws IOException {
        new Issued(keys, certificate).write(dir, name);
    }

    /** A certificate this CA signed, with its key. */
    record Issued(KeyPair keys, X509Certificate certificate) {
        /** {@code name.pem} (the certificate) and {@code name-key.pem} (the PKCS#8 key, owner-only). */
        void write(Path dir, String name) throws IOException {
            try {
                Files.writeString(dir.resolve(name + ".pem"), pem("CERTIFICATE", certificate.getEncoded()),
                        StandardCharsets.US_ASCII);
            } catch (java.security.cert.CertificateEncodingException e) {
                throw new IllegalStateException("cannot encode the certificate " + name + ": " + e.getMessage(), e);
            }
            PrivateFiles.write(dir.resolve(name + "-key.pem"), pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static KeyPair newKeys() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK cannot make EC P-256 keys: " + e.getMessage(), e);
        }
    }

    private static BigInteger serial() {
        return new BigInteger(64, RANDOM).add(BigInteger.ONE);
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair signer) {
        try {
            return new JcaX509CertificateConverter().getCertificate(
                    builder.build(new JcaContentSignerBuilder(SIGNATURE).build(signer.getPrivate())));
        } catch (OperatorCreationException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign a certificate: " + e.getMessage(), e);
        }
    }
}
