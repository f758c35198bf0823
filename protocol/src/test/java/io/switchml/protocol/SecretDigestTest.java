package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class SecretDigestTest {
    /** FIPS 180-2's vector for "abc"; the worker and the controller both call this, so they agree by construction. */
    @Test
    void isTheSha256OfTheSecretsUtf8Bytes() {
        assertThat(HexFormat.of().formatHex(SecretDigest.of("abc")))
                .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertThat(SecretDigest.of("a secret of a job")).hasSize(SecretDigest.BYTES).isNotEqualTo(SecretDigest.of("another"));
    }
}
