/* Which coordinator a client reached (common/cluster.c): KGB_CLUSTER_ID first, else
 * the id pinned for the endpoint at first use. */
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "test.h"
#include "util.h"

TEST(cluster_id_env_and_pins)
{
	char dir[1024], err[1024], *text;
	size_t len;
	snprintf(dir, sizeof dir, "%s/cfg", kgb_test_tmpdir());
	setenv("KGB_CONFIG_DIR", dir, 1);
	unsetenv("KGB_CLUSTER_PIN");
	unsetenv("KGB_CLUSTER_ID");
	/* first use pins; the same id again is fine; another is refused naming the line */
	ASSERT_OK(kgb_cluster_check("tcp://127.0.0.1:7711", "aaaa", err, sizeof err), err);
	ASSERT_OK(kgb_cluster_check("tcp://127.0.0.1:7711", "aaaa", err, sizeof err), err);
	ASSERT_OK(kgb_cluster_check("ipc:///run/kgb.sock", "bbbb", err, sizeof err), err);
	ASSERT_EQ_INT(kgb_cluster_check("tcp://127.0.0.1:7711", "cccc", err, sizeof err), -1);
	ASSERT_CONTAINS(err, "is cluster cccc, but ");
	ASSERT_CONTAINS(err, "cfg/clusters line 1 pinned cluster aaaa");
	char *file = kgb_cluster_pin_file();
	text = kgb_read_file(file, &len, err, sizeof err);
	ASSERT_TRUE(text != NULL);
	ASSERT_EQ_STR(text, "tcp://127.0.0.1:7711 aaaa\nipc:///run/kgb.sock bbbb\n");
	free(text);
	/* a coordinator that says no id (an older one) is compared with nothing */
	ASSERT_OK(kgb_cluster_check("tcp://127.0.0.1:7711", "", err, sizeof err), err);
	/* KGB_CLUSTER_ID wins over the pin, and wants an id said */
	setenv("KGB_CLUSTER_ID", "cccc", 1);
	ASSERT_OK(kgb_cluster_check("tcp://127.0.0.1:7711", "cccc", err, sizeof err), err);
	ASSERT_EQ_INT(kgb_cluster_check("tcp://127.0.0.1:7711", "aaaa", err, sizeof err), -1);
	ASSERT_CONTAINS(err, "is cluster aaaa, not KGB_CLUSTER_ID=cccc");
	ASSERT_EQ_INT(kgb_cluster_check("tcp://127.0.0.1:7711", NULL, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "did not say its cluster id");
	unsetenv("KGB_CLUSTER_ID");
	/* pinning off */
	setenv("KGB_CLUSTER_PIN", "0", 1);
	ASSERT_TRUE(kgb_cluster_pin_file() == NULL);
	ASSERT_OK(kgb_cluster_check("tcp://127.0.0.1:7711", "dddd", err, sizeof err), err);
	unsetenv("KGB_CLUSTER_PIN");
	unsetenv("KGB_CONFIG_DIR");
	free(file);
}
