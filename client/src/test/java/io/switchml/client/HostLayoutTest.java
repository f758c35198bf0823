package io.switchml.client;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HostLayoutTest {
    @Test
    void parsesHostsAndTheirRanksInSummingOrder() {
        HostLayout layout = HostLayout.parse(" 2,0 / 1,3 ", 4);
        assertThat(layout.hostCount()).isEqualTo(2);
        assertThat(layout.ranksOf(0)).containsExactly(2, 0);
        assertThat(layout.hostOf(3)).isEqualTo(1);
        assertThat(layout.rankCount()).isEqualTo(4);
        assertThat(layout.groupsRanks()).isTrue();
        assertThat(layout).hasToString("2,0/1,3");
        assertThat(HostLayout.parse(layout.toString(), 4)).isEqualTo(layout);
    }

    @Test
    void aRankAloneOnEveryHostGroupsNothing() {
        assertThat(HostLayout.parse("0/1/2", 3).groupsRanks()).isFalse();
    }

    @Test
    void blocksAndKeysMakeLayouts() {
        assertThat(HostLayout.blocks(6, 3)).hasToString("0,1,2/3,4,5");
        assertThat(HostLayout.byKey(List.of("b", "a", "b", "a", "c"))).hasToString("0,2/1,3/4");
        assertThatThrownBy(() -> HostLayout.blocks(5, 2)).hasMessageContaining("5 ranks do not fill hosts of 2");
    }

    @Test
    void badLayoutsSayWhatIsWrong() {
        assertThatThrownBy(() -> HostLayout.parse("0,1/2", 4)).hasMessageContaining("leaves out rank(s) [3]");
        assertThatThrownBy(() -> HostLayout.parse("0,1/1,2", 3)).hasMessageContaining("names rank 1 twice");
        assertThatThrownBy(() -> HostLayout.parse("0,4", 2)).hasMessageContaining("rank 4 is not in 0..1");
        assertThatThrownBy(() -> HostLayout.parse("0,x", 2)).hasMessageContaining("'x' is not a rank");
        assertThatThrownBy(() -> HostLayout.parse("0,1//", 2)).hasMessageContaining("'' is not a rank");
    }

    @Test
    void theWorkerSettingIsCheckedWithTheWorkers() {
        SwitchMLConfig config = SwitchMLConfig.builder().rank(1).workers(4).set(SwitchMLConfig.Key.HOST_LAYOUT, "0,1/2,3").build();
        assertThat(config.hostLayout().hostOf(1)).isZero();
        assertThat(SwitchMLConfig.builder().rank(0).workers(2).build().hostLayout()).isNull();
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(3).set(SwitchMLConfig.Key.HOST_LAYOUT, "0,1").build())
                .hasMessageContaining("leaves out rank(s) [2]");
    }
}
