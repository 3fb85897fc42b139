/* tests/unit/test_tls_wrap.c: tls-auth and tls-crypt wrapping.
 *
 * The vectors are the first control packets of four sessions between the stock openvpn 2.6.14
 * server and client (Debian package) on loopback in a private network namespace, captured with
 * tcpdump and extracted with tshark (-T fields -e udp.payload); the key files were made by
 * `openvpn --genkey tls-auth` and `openvpn --genkey tls-crypt` for these runs:
 *   auth01:     tls-auth, default --auth SHA1, server "tls-auth ta.key 0", client "... 1"
 *   authnd256:  tls-auth without key direction on both ends, --auth SHA256
 *   auth10s512: tls-auth, --auth SHA512, server "tls-auth ta.key 1", client "key-direction 0"
 *   crypt:      tls-crypt tc.key on both ends
 * The expected fields (opcodes, session ids, acks, message ids, payload lengths) were decoded
 * with an independent script (Python hmac/hashlib and the cryptography package).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_hex.h"
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>

#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/static_key.h"
#include "proto/tls_wrap.h"

static const char ta_key_text[] = "#\n"
                                  "# 2048 bit OpenVPN static key\n"
                                  "#\n"
                                  "-----BEGIN OpenVPN Static key V1-----\n"
                                  "7dba08cdf3f790bf6109ad9dafbaf99f\n"
                                  "20f8b2dd69dd140413ddd1ce387feed2\n"
                                  "6aa19bea771fe0ca8ceaf4c27725fd41\n"
                                  "7952280ad73c9a891ff2043c32e81572\n"
                                  "825e7be7159fbe1fb2feb6bac1fcbced\n"
                                  "1f6638aacb3ecbc8a75b83340a7bdba6\n"
                                  "da941a91fd058d129e47f2c9bae0b75b\n"
                                  "bc2951dd018e966bb133d6a0df2b4351\n"
                                  "228f99543970ad2af19756b7ef05b601\n"
                                  "233f892213ac0e668b4e2db71eac36ee\n"
                                  "6aff6b7cd2c034095d680022a5c7203d\n"
                                  "985bc780bf964439fbff0626eeb7ddb9\n"
                                  "fb1da6312676ccec81fdf53894eaadd2\n"
                                  "afb92fd6d8906c10ba31965a47f616fc\n"
                                  "35ad878ef1610f213097d8c9ade33732\n"
                                  "b9b7f23d56d973ba011616ffd0c2228b\n"
                                  "-----END OpenVPN Static key V1-----\n";

static const char tc_key_text[] = "#\n"
                                  "# 2048 bit OpenVPN static key\n"
                                  "#\n"
                                  "-----BEGIN OpenVPN Static key V1-----\n"
                                  "007dafe1590d8a47b621269f17270ba7\n"
                                  "db57b34918853a04233759e33aac3ec2\n"
                                  "e0fa7b652d2296660b5224db808add1d\n"
                                  "8ff95641d950b36c0c3d844e059719ef\n"
                                  "f199e127683f0a2047f6e3601c1172fe\n"
                                  "16ae249bf9c5552351d2748ac6f5aa4b\n"
                                  "a96e62860c6d5fb4db08f42351024d88\n"
                                  "4a82e5b20ec3fe43ea6bb799b070a17e\n"
                                  "9be517943e191c46ae1c0904d483032b\n"
                                  "7c382a23858a34f1d3623c65eb681a72\n"
                                  "fc9511bf1137a8e25a924a20e2f3c5e4\n"
                                  "4e2a9906e0c126ce147a89ec80857ecb\n"
                                  "2068f03a122e90b3aa67de3e98b7d8f2\n"
                                  "b2ec2d5116f38d586a98747bd27ee30b\n"
                                  "9c9248b3c8203180786d5dee877c37f4\n"
                                  "e6faaa38e504cd078b10b79a5e59fac8\n"
                                  "-----END OpenVPN Static key V1-----\n";

/* auth01 #1 c2s, 42 bytes */
static const char auth01_1_c2s[] =
    "387178681c581da8bbd4437e2df54af430835dd99072f49868b8e85005000000016b0cc6c90000000000";
/* auth01 #2 s2c, 54 bytes */
static const char auth01_2_s2c[] =
    "403930cbaff6e9fa87d75c0f8095145ab09b296629956cf18d5462f5a7000000016b0cc6c901000000007178"
    "681c581da8bb00000000";
/* auth01 #3 c2s, 331 bytes */
static const char auth01_3_c2s[] =
    "207178681c581da8bb009f53bc6a51f73721be19e1cc0d5f6cca224d87000000026b0cc6c901000000003930"
    "cbaff6e9fa870000000116030101100100010c030371c592d165413941486d782a07753405ef9b664af5380f"
    "117114ef1e590cd081206abe404f6a6dd9d8b71cea4a0e2dd68962deb5521baf2421e3f57e0460f746190032"
    "130213031301c02cc030009fcca9cca8ccaac02bc02f009ec024c028006bc023c0270067c00ac0140039c009"
    "c013003300ff01000091000b000403000102000a00160014001d0017001e0019001801000101010201030104"
    "0016000000170000000d002a0028040305030603080708080809080a080b0804080508060401050106010303"
    "03010302040205020602002b00050403040303002d00020101003300260024001d002013004da18affbd1ade"
    "0946a2d1d6a20469eb65bae4bb7c21483e2e590944280e";
/* auth01 #5 s2c, 142 bytes */
static const char auth01_5_s2c[] =
    "203930cbaff6e9fa87d3f4173ca020206dfe9cc63fc0ee9a2d2dbb0ed7000000036b0cc6c901000000017178"
    "681c581da8bb00000002022e3c3ed94388c6e0f0d84600191703030045609614af1309b4fd13100c547177fa"
    "81f7c894f9fe114ec9f859d027e59e0bb5897dd6de6e07556e696c3401bd941b7e170f21608410888b11ed57"
    "65e587201d537679e958";
/* auth01 #6 c2s, 54 bytes */
static const char auth01_6_c2s[] =
    "287178681c581da8bb7116e49d53cb7b771c942c67dd85a63600b8bd03000000036b0cc6c902000000010000"
    "00003930cbaff6e9fa87";
/* authnd256 #1 c2s, 54 bytes */
static const char authnd256_1_c2s[] =
    "386a2675a843fdc3cb36003dafaae6553a8f600b28a06550f79f0bd8b8f2a788cdb1159e6e5eb9b738000000"
    "016b0cc6cd0000000000";
/* authnd256 #2 s2c, 66 bytes */
static const char authnd256_2_s2c[] =
    "4017f324ad904a07e60c1ac86d917137432d03c0873c77c11f5f1cbe75277bb85dd95d1fb334e22c2c000000"
    "016b0cc6cd01000000006a2675a843fdc3cb00000000";
/* authnd256 #3 c2s, 343 bytes */
static const char authnd256_3_c2s[] =
    "206a2675a843fdc3cba888c6de198a5a4993b83a6e9ed55c3b7fd67c95b9581bf2998976aa8bb57d6b000000"
    "026b0cc6cd010000000017f324ad904a07e60000000116030101100100010c0303d0560fd3d94830be499175"
    "45d69977c11e1fac622eacdf05c5ad73744e2172ff20a6740e4a6c93eb37e6de434d31e643cceb3676f6ac42"
    "6e497903ea470136d9530032130213031301c02cc030009fcca9cca8ccaac02bc02f009ec024c028006bc023"
    "c0270067c00ac0140039c009c013003300ff01000091000b000403000102000a00160014001d0017001e0019"
    "0018010001010102010301040016000000170000000d002a0028040305030603080708080809080a080b0804"
    "08050806040105010601030303010302040205020602002b00050403040303002d0002010100330026002400"
    "1d00201b62ac74eb5af35acc65cbeaa74f5c573bd39c4aefa5a35fca660e1b808a9b23";
/* authnd256 #5 s2c, 167 bytes */
static const char authnd256_5_s2c[] =
    "2017f324ad904a07e63d48d433b8c89e5cab28e67c0b09305b50099361ab100ada637fe32c70f35823000000"
    "036b0cc6cd01000000016a2675a843fdc3cb000000027db153bc919d392b807cc482e8a477b329ab81d53a85"
    "b43ffd718a1703030045f20f53b0501466514e6f7bb98d87ea8cf4090d1b2ad4e5b245e521fc67412e7cc431"
    "12a9f29d42dbd6396c3304662cd80afc304ccca9c3cf825bd425f8c3fd7b8bd512254c";
/* authnd256 #6 c2s, 66 bytes */
static const char authnd256_6_c2s[] =
    "286a2675a843fdc3cb019fe81fa2635ff7dab35f803c563392fe6a64defcdc470f4a021107b55d6681000000"
    "036b0cc6cd02000000010000000017f324ad904a07e6";
/* auth10s512 #1 c2s, 86 bytes */
static const char auth10s512_1_c2s[] =
    "38dca35d666a9c155821f97f140d314aaefb6d96a0fd9dc57415632dc3cba0fe54e1b819363e5a4e31c450c9"
    "f8e4a7693fe04334b0cf11dae3f6daffedec705b30acd67380f2e132fb000000016b0cc6cf0000000000";
/* auth10s512 #2 s2c, 98 bytes */
static const char auth10s512_2_s2c[] =
    "40b9660d8426e3e7a3a832291dd6275cc47a70d822fd647dc594fd0dab0795b6ad200a48f653dc62bff9db86"
    "d801da367125452a19b3d851e664b9044585250c336482cdacf0be4c34000000016b0cc6cf0100000000dca3"
    "5d666a9c155800000000";
/* auth10s512 #3 c2s, 375 bytes */
static const char auth10s512_3_c2s[] =
    "20dca35d666a9c1558e97cd824f7262b1961c9e6b53b7939bb4279483590066f09350a8ed15c13fb1c8703d5"
    "49ce6f6b4b8889f478d9c6f437c6d2741110264e5ff5cb93fbebad47a9000000026b0cc6cf0100000000b966"
    "0d8426e3e7a30000000116030101100100010c03032b0f1fff2021690daba6d207a367042b673783d7e5cae8"
    "0e776e0c67935e9f03206ff67be18a7ebfc7af37df39d7476d308256310df828cc9fadda58b535fd2ae30032"
    "130213031301c02cc030009fcca9cca8ccaac02bc02f009ec024c028006bc023c0270067c00ac0140039c009"
    "c013003300ff01000091000b000403000102000a00160014001d0017001e0019001801000101010201030104"
    "0016000000170000000d002a0028040305030603080708080809080a080b0804080508060401050106010303"
    "03010302040205020602002b00050403040303002d00020101003300260024001d002073ebb1c8421afecbb1"
    "7f5d7e04a4ed3c691d5195f2f47879ba4e7d772094b21f";
/* auth10s512 #5 c2s, 98 bytes */
static const char auth10s512_5_c2s[] =
    "28dca35d666a9c1558b523ff850fb59173935878eedc0fff58442c943781f3156f4a29f9951737bd38755018"
    "3d8ced946945b063eeb5b59be8808aca338f09fc0c1180bccec9123922000000036b0cc6cf02000000010000"
    "0000b9660d8426e3e7a3";
/* auth10s512 #6 s2c, 230 bytes */
static const char auth10s512_6_s2c[] =
    "20b9660d8426e3e7a38304fda962ead4bcc3e8f69028356987d55bb9cb409333857ad2c05771fcb1430b5ad4"
    "d16e892b1d06eaf3c0cd7658c72bf032b9667bdcac7904b6b817a217b9000000036b0cc6cf0100000001dca3"
    "5d666a9c155800000002d3ba30c25e5ad9eae852c72dba142b89656bf7e62e61d82f2101098714c4c9e5c166"
    "ea4a663cd0847dc205f62c074337ce86e66d71689856a3761703030045dd627cfcc002fe46b8e4d3c7b8b744"
    "442a61feaf34e34d2c023bde219450a9c4673dcbc46bb80970d46d3da711987624e04440e61aa9965e9f31ca"
    "ee6815e92ba69367f6e2";
/* crypt #1 c2s, 54 bytes */
static const char crypt_1_c2s[] =
    "38cf695c0324d7bb54000000016b0cc6d1b1325ad3743f800ac5bf7af726df333e5facfaaf84405559356e76"
    "c51ea30b33d5dbf0a13f";
/* crypt #2 s2c, 66 bytes */
static const char crypt_2_s2c[] =
    "40a3a8de47aa392395000000016b0cc6d1a6b426082d02786d44fe28fc8993927223a5ac4d86e735b67b8588"
    "fbb6b9e1d9333f36cf8a663380c7709590873e0c76e7";
/* crypt #3 c2s, 343 bytes */
static const char crypt_3_c2s[] =
    "20cf695c0324d7bb54000000026b0cc6d11f5394f3a6a572365a4fce467d2bf6b2d14ee4bd5d0e0bb7c78956"
    "b56ff6ee69647e61649ed86ab084425c8f02c271fce7c8a14d120d9c23c015a520afd8941379165c70143cd9"
    "a7b53f8cf66dc72a5fd7227517fc131598d7109818cb4e308b010b9dc23115b5e31db9519860dc67c4ab8205"
    "8f37fad13668c10c0ac576f10b847149d998ba8e2bd4b2613741f5404878a61a03773f7d45336ea6e1bae21e"
    "81ed32809e03864f4c1676211ce7b4eacd8e0d1c58d183ad0a96ba315cb3ab2a9526b4aab00d02465dd752b2"
    "f98ec3be7c6ffb50f1c4b275ee73630fa2266ef22781873e25af0211365e106a85770dad307be0dfd2c18c24"
    "79b40646de49398fc7bea8a9f99541173de4da5b54e1cb4cf131684f9287ee1c25a9ff84fde4bee9ae3d720e"
    "ea26a496302cbe69b19950891e5de633c0e7e42e319cb2bd94da54e18ac2ed66990929";
/* crypt #4 s2c, 1206 bytes */
static const char crypt_4_s2c[] =
    "20a3a8de47aa392395000000026b0cc6d1b4b3374b82b303bd45bad824f2ddb2b85709e05e350c34745bff7e"
    "bbbc007fea92dca788ee3a63e686a16fe8dd406bd8bb3adbb87474a48d00cf40ae4a4e0ab1f1eda78695e646"
    "ff04209624107048139a5668b5de7871dcfec475c9b09b9fe4e1f5876a0fb6fa85a6c39ba7833f4ec2b75d93"
    "13469f58ffd9b126a9aec434bad680b015cae39d626b280c9f5c144133ae0004981b7700f4e8f0aece12e6bc"
    "d4679f79c37dac8c96a23c21ca535f6ac161fa7e0e491c6426c188273daa475630d516922c9aa0c4b7daabf1"
    "028bff555f6dcad1eb6cdbb329917c85926241f55e80179d023e393d6c0dc98e1e9d49ca817001a3ee879c2c"
    "9fcf566b928019d725bfd81adbce415d0423ba3281aa315b9c46d8aa3a05a93512650adaf72c12ca54f543dc"
    "9ed475cc60f30c0bbbcf3948274ec410208101f1c280f84598d5824678791cd4a50487f343678b57cf421534"
    "27250d1d017d5b0ccd42f5f0e979197bfba887c19afe2bbfe529bc5a2311c1ed963bd901eee4920f49604fbf"
    "c3556f4cbedbe4555a538d1f850eb1701bcc80668a26c9139ddf52edb50d3f893d4b6260a928c2a2d4da191e"
    "d30a5e126345b91ae131a794054d8cfa7b5aea56977efab2707ee4e54b0cac584a34637682f6142d43737193"
    "ff3ed918a53e60e4caeac902e1573a5f54a99f0d25bfa02d3b9d4125ac8c9ae6f04caf4d145a2478a3197eef"
    "00b3c5f028c0eace7525749393c3a2a4881def16935d97ec4fe1592931e80b53ae830f959e5788d571e624eb"
    "75a62cdd6688b1a4eb67b06ab7f58f9a1c3f5864e6f25853fc2b206199b6c2b4d0d077a582b961607824450d"
    "1061b4bba46afa424a90b6694b4b846d9fd39c01b204d1578399a6a6100893a9e79b7e9394e331d2696fc44e"
    "644de50770c34e62faec4f5c024a518e133edee91b307b769df28c72336f8866afaeca2abf03127822f5626c"
    "3dcdfad3e92b8baa230de1c196aa6406f21d9970b4c6068547ccea70ab5285ae4368ad162d3ff8c3f463e6b2"
    "8955ccf4f3908b55dbf2b3cb64a821045fdfe28c5e877a179a436168330097cc12a1039356d32c6f967e202d"
    "41294509361b5d442b06a333a49f8c2e7672ed2792c210a35e932cadc4aac7e8ba5b73158a941b45dd604f12"
    "2dfc4e35ab462579f957ad70142d46d70e594d86036f296c4013ebd0e632ac130870233b91e3b7bcc6efe1b6"
    "7619dc07db45d205c1efacab5e456790e1cc51b925d3c2ee1613a28c86cbbe2854985954fd175f1fa295c976"
    "5cfe8cbb9587b9269c2437498a25ddece7198e950bbd91bd2437427aa90ae0b35ab51bf976456f549ad3d545"
    "148f0af8c4ace084be4b7ca57691a9b9a1a17e20c2db2fef3a96849dca08158eba5f097bd470ca9a298a15cc"
    "0c8d771317fc52ab516c8fe9186f9f9348dd03e097ebca8b412d6a22de0b6d911a7e6fdab15320d9daf8579e"
    "6a53ba7403052f37f236109dec597f6bd8fab33c268cebdb6eef94e85886f1de4ebcbedfa8e950a5a9f3c0bc"
    "7a76e2b595ba8cf90c019d2d7c071598ccaac53b5043b3f63d0b09eaf48df945d293066327b52b72b545a0d8"
    "c7088e0b7906e8be9d15332db9ebf61ba7cc5ce636d28323fd5ba7b7f12bb6ea6034a179a89fd1ce637e735d"
    "42a41ff0fbe42f514e1b722de91e3b38a9d6";
/* crypt #6 c2s, 66 bytes */
static const char crypt_6_c2s[] =
    "28cf695c0324d7bb54000000036b0cc6d17866831d3176c132f99882767abe3ebcc4dbf3d5cdb920dd1c4173"
    "1f427dffc5bb07a0d96f511c26a8cae35ac39b2340cf";

/* How the two ends of one capture were configured. */
struct scenario {
    const char *key_text;
    enum tls_wrap_mode mode;
    const char *auth_digest; /* --auth; NULL = default SHA1 */
    int server_dir;          /* key direction given to the server (-1 = none) */
    int client_dir;
};

static const struct scenario sc_auth01 = {ta_key_text, TLS_WRAP_AUTH, NULL, 0, 1};
static const struct scenario sc_authnd256 = {ta_key_text, TLS_WRAP_AUTH, "SHA256", -1, -1};
static const struct scenario sc_auth10s512 = {ta_key_text, TLS_WRAP_AUTH, "sha512", 1, 0};
static const struct scenario sc_crypt = {tc_key_text, TLS_WRAP_CRYPT, NULL, -1, -1};

/* One captured packet and what it must unwrap to. */
struct wire_vec {
    const char *name;
    const struct scenario *sc;
    bool from_server;
    const char *hex;
    uint8_t byte0;
    const char *sid; /* sender's session id */
    uint32_t packet_id, net_time;
    uint8_t n_acks;
    uint32_t acks[6];
    const char *remote_sid; /* in the ack block; NULL when n_acks == 0 */
    bool has_message_id;    /* false for P_ACK_V1 */
    uint32_t message_id;
    size_t payload_len;
    const char *payload_prefix; /* hex, may be NULL */
};

/* Client and server session ids, read from the clear headers of each capture. */
#define A01_C "7178681c581da8bb"
#define A01_S "3930cbaff6e9fa87"
#define AND_C "6a2675a843fdc3cb"
#define AND_S "17f324ad904a07e6"
#define A10_C "dca35d666a9c1558"
#define A10_S "b9660d8426e3e7a3"
#define CR_C "cf695c0324d7bb54"
#define CR_S "a3a8de47aa392395"

/* Client reset (0x38, message 0, no acks); server reset (0x40) acking message 0 with the client's
 * session id; client P_CONTROL_V1 (0x20) acking the server reset, message 1, ClientHello (TLS
 * record 16 03 01); P_ACK_V1 (0x28) without message id; server P_CONTROL_V1. */
static const struct wire_vec vecs[] = {
    {"auth01 client reset",
     &sc_auth01,
     false,
     auth01_1_c2s,
     0x38,
     A01_C,
     1,
     0x6b0cc6c9,
     0,
     {0},
     NULL,
     true,
     0,
     0,
     NULL},
    {"auth01 server reset",
     &sc_auth01,
     true,
     auth01_2_s2c,
     0x40,
     A01_S,
     1,
     0x6b0cc6c9,
     1,
     {0},
     A01_C,
     true,
     0,
     0,
     NULL},
    {"auth01 client hello",
     &sc_auth01,
     false,
     auth01_3_c2s,
     0x20,
     A01_C,
     2,
     0x6b0cc6c9,
     1,
     {0},
     A01_S,
     true,
     1,
     277,
     "160301"},
    {"auth01 server control",
     &sc_auth01,
     true,
     auth01_5_s2c,
     0x20,
     A01_S,
     3,
     0x6b0cc6c9,
     1,
     {1},
     A01_C,
     true,
     2,
     88,
     NULL},
    {"auth01 client ack",
     &sc_auth01,
     false,
     auth01_6_c2s,
     0x28,
     A01_C,
     3,
     0x6b0cc6c9,
     2,
     {1, 0},
     A01_S,
     false,
     0,
     0,
     NULL},

    {"authnd256 client reset",
     &sc_authnd256,
     false,
     authnd256_1_c2s,
     0x38,
     AND_C,
     1,
     0x6b0cc6cd,
     0,
     {0},
     NULL,
     true,
     0,
     0,
     NULL},
    {"authnd256 server reset",
     &sc_authnd256,
     true,
     authnd256_2_s2c,
     0x40,
     AND_S,
     1,
     0x6b0cc6cd,
     1,
     {0},
     AND_C,
     true,
     0,
     0,
     NULL},
    {"authnd256 client hello",
     &sc_authnd256,
     false,
     authnd256_3_c2s,
     0x20,
     AND_C,
     2,
     0x6b0cc6cd,
     1,
     {0},
     AND_S,
     true,
     1,
     277,
     "160301"},
    {"authnd256 server control",
     &sc_authnd256,
     true,
     authnd256_5_s2c,
     0x20,
     AND_S,
     3,
     0x6b0cc6cd,
     1,
     {1},
     AND_C,
     true,
     2,
     101,
     NULL},
    {"authnd256 client ack",
     &sc_authnd256,
     false,
     authnd256_6_c2s,
     0x28,
     AND_C,
     3,
     0x6b0cc6cd,
     2,
     {1, 0},
     AND_S,
     false,
     0,
     0,
     NULL},

    {"auth10s512 client reset",
     &sc_auth10s512,
     false,
     auth10s512_1_c2s,
     0x38,
     A10_C,
     1,
     0x6b0cc6cf,
     0,
     {0},
     NULL,
     true,
     0,
     0,
     NULL},
    {"auth10s512 server reset",
     &sc_auth10s512,
     true,
     auth10s512_2_s2c,
     0x40,
     A10_S,
     1,
     0x6b0cc6cf,
     1,
     {0},
     A10_C,
     true,
     0,
     0,
     NULL},
    {"auth10s512 client hello",
     &sc_auth10s512,
     false,
     auth10s512_3_c2s,
     0x20,
     A10_C,
     2,
     0x6b0cc6cf,
     1,
     {0},
     A10_S,
     true,
     1,
     277,
     "160301"},
    {"auth10s512 client ack",
     &sc_auth10s512,
     false,
     auth10s512_5_c2s,
     0x28,
     A10_C,
     3,
     0x6b0cc6cf,
     2,
     {1, 0},
     A10_S,
     false,
     0,
     0,
     NULL},
    {"auth10s512 server control",
     &sc_auth10s512,
     true,
     auth10s512_6_s2c,
     0x20,
     A10_S,
     3,
     0x6b0cc6cf,
     1,
     {1},
     A10_C,
     true,
     2,
     132,
     NULL},

    {"crypt client reset",
     &sc_crypt,
     false,
     crypt_1_c2s,
     0x38,
     CR_C,
     1,
     0x6b0cc6d1,
     0,
     {0},
     NULL,
     true,
     0,
     0,
     NULL},
    {"crypt server reset",
     &sc_crypt,
     true,
     crypt_2_s2c,
     0x40,
     CR_S,
     1,
     0x6b0cc6d1,
     1,
     {0},
     CR_C,
     true,
     0,
     0,
     NULL},
    {"crypt client hello",
     &sc_crypt,
     false,
     crypt_3_c2s,
     0x20,
     CR_C,
     2,
     0x6b0cc6d1,
     1,
     {0},
     CR_S,
     true,
     1,
     277,
     "160301"},
    {"crypt server hello",
     &sc_crypt,
     true,
     crypt_4_s2c,
     0x20,
     CR_S,
     2,
     0x6b0cc6d1,
     1,
     {1},
     CR_C,
     true,
     1,
     1140,
     "160303"},
    {"crypt client ack",
     &sc_crypt,
     false,
     crypt_6_c2s,
     0x28,
     CR_C,
     3,
     0x6b0cc6d1,
     2,
     {1, 0},
     CR_S,
     false,
     0,
     0,
     NULL},
};

#define N_VECS (sizeof(vecs) / sizeof(vecs[0]))
#define MAX_PKT 1600

static void load_key(const struct scenario *sc, uint8_t key2[STATIC_KEY_LEN])
{
    assert_int_equal(static_key_parse(sc->key_text, strlen(sc->key_text), key2), 0);
}

/* The context of one end of a capture: the sender when sealing, the receiver when opening. */
static void init_side(struct tls_wrap_ctx *ctx, const struct scenario *sc, bool is_server)
{
    uint8_t key2[STATIC_KEY_LEN];

    load_key(sc, key2);
    assert_int_equal(tls_wrap_init(ctx, sc->mode, key2, is_server ? sc->server_dir : sc->client_dir,
                                   sc->auth_digest, is_server),
                     0);
}

static void assert_hex_equal(const uint8_t *p, const char *hex)
{
    uint8_t want[64];
    size_t n = unhex(hex, want, sizeof(want));

    assert_memory_equal(p, want, n);
}

/* Check an unwrapped packet against the fields the capture must carry (protocol doc 1.4). */
static void check_fields(const struct wire_vec *v, const uint8_t *pkt, size_t len)
{
    struct cursor c = cur_make(pkt, len);
    uint8_t byte0, n_acks, sid[8];
    uint32_t id;

    assert_int_equal(cur_u8(&c, &byte0), 0);
    assert_int_equal(byte0, v->byte0);
    assert_int_equal(cur_read(&c, sid, 8), 0);
    assert_hex_equal(sid, v->sid);
    assert_int_equal(cur_u8(&c, &n_acks), 0);
    assert_int_equal(n_acks, v->n_acks);
    for (uint8_t i = 0; i < n_acks; i++) {
        assert_int_equal(cur_be32(&c, &id), 0);
        assert_int_equal(id, v->acks[i]);
    }
    if (n_acks > 0) {
        assert_int_equal(cur_read(&c, sid, 8), 0);
        assert_hex_equal(sid, v->remote_sid);
    }
    if (v->has_message_id) {
        assert_int_equal(cur_be32(&c, &id), 0);
        assert_int_equal(id, v->message_id);
    }
    assert_int_equal(c.left, v->payload_len);
    if (v->payload_prefix) {
        assert_hex_equal(c.p, v->payload_prefix);
    }
}

static void captured_packets_open(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_VECS; i++) {
        const struct wire_vec *v = &vecs[i];
        uint8_t wire[MAX_PKT], plain[MAX_PKT];
        size_t wire_len = unhex(v->hex, wire, sizeof(wire)), plain_len;
        struct tls_wrap_ctx rx;
        uint32_t packet_id, net_time;

        print_message("%s\n", v->name);
        init_side(&rx, v->sc, !v->from_server);
        assert_int_equal(tls_wrap_open(&rx, wire, wire_len, plain, sizeof(plain), &plain_len,
                                       &packet_id, &net_time),
                         0);
        assert_int_equal(plain_len, wire_len - tls_wrap_overhead(&rx));
        assert_int_equal(packet_id, v->packet_id);
        assert_int_equal(net_time, v->net_time);
        check_fields(v, plain, plain_len);
        tls_wrap_wipe(&rx);
    }
}

static void captured_packets_reseal_identically(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_VECS; i++) {
        const struct wire_vec *v = &vecs[i];
        uint8_t wire[MAX_PKT], plain[MAX_PKT], resealed[MAX_PKT];
        size_t wire_len = unhex(v->hex, wire, sizeof(wire)), plain_len, resealed_len;
        struct tls_wrap_ctx rx, tx;
        uint32_t packet_id, net_time;

        print_message("%s\n", v->name);
        init_side(&rx, v->sc, !v->from_server);
        init_side(&tx, v->sc, v->from_server);
        assert_int_equal(tls_wrap_open(&rx, wire, wire_len, plain, sizeof(plain), &plain_len,
                                       &packet_id, &net_time),
                         0);
        assert_int_equal(tls_wrap_seal(&tx, packet_id, net_time, plain, plain_len, resealed,
                                       sizeof(resealed), &resealed_len),
                         0);
        assert_int_equal(resealed_len, wire_len);
        assert_memory_equal(resealed, wire, wire_len);
        /* exactly the room needed is enough */
        assert_int_equal(tls_wrap_seal(&tx, packet_id, net_time, plain, plain_len, resealed,
                                       wire_len, &resealed_len),
                         0);
        assert_memory_equal(resealed, wire, wire_len);
    }
}

static void any_bit_flip_fails_auth(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_VECS; i++) {
        const struct wire_vec *v = &vecs[i];
        uint8_t wire[MAX_PKT], plain[MAX_PKT];
        size_t wire_len = unhex(v->hex, wire, sizeof(wire)), plain_len;
        struct tls_wrap_ctx rx;
        uint32_t packet_id, net_time;

        init_side(&rx, v->sc, !v->from_server);
        for (size_t bit = 0; bit < wire_len * 8; bit++) {
            wire[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            memset(plain, 0x5a, sizeof(plain));
            assert_int_equal(tls_wrap_open(&rx, wire, wire_len, plain, sizeof(plain), &plain_len,
                                           &packet_id, &net_time),
                             -PE_AUTH);
            assert_int_equal(plain_len, 0);
            assert_int_equal(packet_id, 0);
            if (v->sc->mode == TLS_WRAP_CRYPT) { /* no unverified plaintext left behind */
                for (size_t k = TLS_WRAP_HEAD_LEN; k < wire_len - TLS_CRYPT_OVERHEAD; k++) {
                    assert_int_equal(plain[k], 0);
                }
            }
            wire[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        /* one byte missing or one byte too many */
        assert_int_equal(tls_wrap_open(&rx, wire, wire_len - 1, plain, sizeof(plain), &plain_len,
                                       &packet_id, &net_time),
                         -PE_AUTH);
        wire[wire_len] = 0;
        assert_int_equal(tls_wrap_open(&rx, wire, wire_len + 1, plain, sizeof(plain), &plain_len,
                                       &packet_id, &net_time),
                         -PE_AUTH);
    }
}

/* A packet must not verify with the key of its own direction, nor with the wrong digest. */
static void wrong_key_slot_or_digest_fails(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_VECS; i++) {
        const struct wire_vec *v = &vecs[i];
        uint8_t wire[MAX_PKT], plain[MAX_PKT], key2[STATIC_KEY_LEN];
        size_t wire_len = unhex(v->hex, wire, sizeof(wire)), plain_len;
        struct tls_wrap_ctx same_side, other_digest;
        uint32_t packet_id, net_time;
        int expect_same_side = -PE_AUTH;

        init_side(&same_side, v->sc, v->from_server);
        if (v->sc->mode == TLS_WRAP_AUTH && v->sc->server_dir < 0) {
            expect_same_side = 0; /* without a direction both ends share key[0].hmac */
        }
        assert_int_equal(tls_wrap_open(&same_side, wire, wire_len, plain, sizeof(plain), &plain_len,
                                       &packet_id, &net_time),
                         expect_same_side);
        if (v->sc->mode == TLS_WRAP_AUTH) {
            load_key(v->sc, key2);
            assert_int_equal(tls_wrap_init(&other_digest, TLS_WRAP_AUTH, key2,
                                           v->from_server ? v->sc->client_dir : v->sc->server_dir,
                                           "SHA384", !v->from_server),
                             0);
            /* SHA384 needs 9 + 48 + 8 bytes before the body */
            assert_int_equal(tls_wrap_open(&other_digest, wire, wire_len, plain, sizeof(plain),
                                           &plain_len, &packet_id, &net_time),
                             wire_len < 65 ? -PE_SHORT : -PE_AUTH);
        }
    }
}

/* Unwrap the largest tls-crypt capture with OpenSSL alone (key slots of protocol doc 3.3) and
 * compare with tls_wrap_open(). */
static void crypt_open_matches_openssl(void **state)
{
    const struct wire_vec *v = NULL;
    uint8_t wire[MAX_PKT], ours[MAX_PKT], theirs[MAX_PKT], key2[STATIC_KEY_LEN];
    uint8_t mac[EVP_MAX_MD_SIZE], hmac_in[MAX_PKT];
    unsigned mac_len = 0;
    size_t wire_len, ours_len, body_len;
    struct tls_wrap_ctx rx;
    uint32_t packet_id, net_time;
    EVP_CIPHER_CTX *evp = EVP_CIPHER_CTX_new();
    int n = 0;

    (void)state;
    for (size_t i = 0; i < N_VECS; i++) {
        if (vecs[i].sc == &sc_crypt && vecs[i].from_server && vecs[i].payload_len > 1000) {
            v = &vecs[i];
        }
    }
    assert_non_null(v);
    assert_non_null(evp);
    wire_len = unhex(v->hex, wire, sizeof(wire));
    body_len = wire_len - 49;
    load_key(&sc_crypt, key2);
    /* server to client: AES key = bytes 0..31, HMAC key = bytes 64..95 */
    assert_int_equal(EVP_DecryptInit_ex(evp, EVP_aes_256_ctr(), NULL, key2, wire + 17), 1);
    assert_int_equal(EVP_DecryptUpdate(evp, theirs, &n, wire + 49, (int)body_len), 1);
    assert_int_equal((size_t)n, body_len);
    EVP_CIPHER_CTX_free(evp);
    memcpy(hmac_in, wire, 17);
    memcpy(hmac_in + 17, theirs, body_len);
    assert_non_null(HMAC(EVP_sha256(), key2 + 64, 32, hmac_in, 17 + body_len, mac, &mac_len));
    assert_int_equal(mac_len, 32);
    assert_memory_equal(mac, wire + 17, 32);

    init_side(&rx, &sc_crypt, false);
    assert_int_equal(
        tls_wrap_open(&rx, wire, wire_len, ours, sizeof(ours), &ours_len, &packet_id, &net_time),
        0);
    assert_int_equal(ours_len, 9 + body_len);
    assert_memory_equal(ours, wire, 9);
    assert_memory_equal(ours + 9, theirs, body_len);
}

/* tls-auth for every accepted digest, checked against an HMAC computed with OpenSSL from the key
 * slot the direction names (protocol doc 3.2). */
static void auth_digests_match_openssl(void **state)
{
    static const struct {
        const char *name;
        size_t len;
    } digests[] = {{"SHA1", 20}, {"sha224", 28}, {"SHA256", 32}, {"Sha384", 48}, {"SHA512", 64}};
    static const int dirs[] = {-1, 0, 1};
    uint8_t key2[STATIC_KEY_LEN], in[300], wire[400], hmac_in[400], mac[EVP_MAX_MD_SIZE];

    (void)state;
    load_key(&sc_auth01, key2);
    for (size_t i = 0; i < sizeof(in); i++) {
        in[i] = (uint8_t)(i * 7 + 3);
    }
    for (size_t d = 0; d < sizeof(digests) / sizeof(digests[0]); d++) {
        const EVP_MD *md = EVP_get_digestbyname(digests[d].name);

        assert_non_null(md);
        for (size_t k = 0; k < sizeof(dirs) / sizeof(dirs[0]); k++) {
            struct tls_wrap_ctx tx;
            size_t h = digests[d].len, wire_len;
            size_t slot = dirs[k] == 1 ? 192 : 64; /* key[1].hmac or key[0].hmac */
            unsigned mac_len = 0;

            assert_int_equal(
                tls_wrap_init(&tx, TLS_WRAP_AUTH, key2, dirs[k], digests[d].name, k == 1), 0);
            assert_int_equal(tls_wrap_overhead(&tx), h + 8);
            assert_int_equal(tls_wrap_seal(&tx, 0x01020304, 0x6b0cc6c9, in, sizeof(in), wire,
                                           sizeof(wire), &wire_len),
                             0);
            assert_int_equal(wire_len, sizeof(in) + h + 8);
            assert_memory_equal(wire, in, 9);
            assert_memory_equal(wire + 9 + h, "\x01\x02\x03\x04\x6b\x0c\xc6\xc9", 8);
            assert_memory_equal(wire + 17 + h, in + 9, sizeof(in) - 9);
            memcpy(hmac_in, wire + 9 + h, 8);
            memcpy(hmac_in + 8, in, sizeof(in));
            assert_non_null(HMAC(md, key2 + slot, (int)h, hmac_in, 8 + sizeof(in), mac, &mac_len));
            assert_int_equal(mac_len, h);
            assert_memory_equal(wire + 9, mac, h);
        }
    }
}

static void round_trip_in_place_and_empty_body(void **state)
{
    static const enum tls_wrap_mode modes[] = {TLS_WRAP_NONE, TLS_WRAP_AUTH, TLS_WRAP_CRYPT};
    uint8_t key2[STATIC_KEY_LEN], in[200], sealed[300], buf[300], plain[300];

    (void)state;
    load_key(&sc_crypt, key2);
    for (size_t i = 0; i < sizeof(in); i++) {
        in[i] = (uint8_t)(i ^ 0x5c);
    }
    for (size_t m = 0; m < 3; m++) {
        struct tls_wrap_ctx srv, cli;

        assert_int_equal(tls_wrap_init(&srv, modes[m], key2, 0, "SHA256", true), 0);
        assert_int_equal(tls_wrap_init(&cli, modes[m], key2, 1, "SHA256", false), 0);
        for (size_t len = 9; len <= sizeof(in); len += 19) {
            size_t sealed_len, buf_len, plain_len, ovh = tls_wrap_overhead(&srv);
            uint32_t packet_id, net_time;

            assert_int_equal(
                tls_wrap_seal(&srv, 7, 99, in, len, sealed, sizeof(sealed), &sealed_len), 0);
            assert_int_equal(sealed_len, len + ovh);
            /* in place: the plaintext at the start of the buffer that receives the result */
            memcpy(buf, in, len);
            assert_int_equal(tls_wrap_seal(&srv, 7, 99, buf, len, buf, sizeof(buf), &buf_len), 0);
            assert_int_equal(buf_len, sealed_len);
            assert_memory_equal(buf, sealed, sealed_len);
            assert_int_equal(tls_wrap_open(&cli, sealed, sealed_len, plain, sizeof(plain),
                                           &plain_len, &packet_id, &net_time),
                             0);
            assert_int_equal(plain_len, len);
            assert_memory_equal(plain, in, len);
            assert_int_equal(packet_id, modes[m] == TLS_WRAP_NONE ? 0 : 7);
            assert_int_equal(net_time, modes[m] == TLS_WRAP_NONE ? 0 : 99);
        }
        tls_wrap_wipe(&srv);
        tls_wrap_wipe(&cli);
    }
}

static void short_and_nospace(void **state)
{
    uint8_t key2[STATIC_KEY_LEN], in[64] = {0x20, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 9};
    uint8_t out[128], plain[128];
    struct tls_wrap_ctx ctxs[3];
    size_t out_len, plain_len;
    uint32_t packet_id, net_time;

    (void)state;
    load_key(&sc_auth01, key2);
    assert_int_equal(tls_wrap_init(&ctxs[0], TLS_WRAP_NONE, NULL, -1, NULL, true), 0);
    assert_int_equal(tls_wrap_init(&ctxs[1], TLS_WRAP_AUTH, key2, -1, NULL, true), 0);
    assert_int_equal(tls_wrap_init(&ctxs[2], TLS_WRAP_CRYPT, key2, -1, NULL, true), 0);
    for (size_t i = 0; i < 3; i++) {
        const struct tls_wrap_ctx *ctx = &ctxs[i];
        size_t ovh = tls_wrap_overhead(ctx), need = 14 + ovh;

        assert_int_equal(tls_wrap_seal(ctx, 1, 2, in, 8, out, sizeof(out), &out_len), -PE_SHORT);
        memset(out, 0xee, sizeof(out));
        assert_int_equal(tls_wrap_seal(ctx, 1, 2, in, 14, out, need - 1, &out_len), -PE_NOSPACE);
        assert_int_equal(out_len, 0);
        assert_int_equal(out[0], 0xee); /* nothing written */
        assert_int_equal(tls_wrap_seal(ctx, 1, 2, in, 14, out, need, &out_len), 0);
        assert_int_equal(out_len, need);
        if (i == 0) { /* NONE is a plain copy */
            assert_memory_equal(out, in, 14);
        }

        assert_int_equal(tls_wrap_open(ctx, out, 9 + ovh - 1, plain, sizeof(plain), &plain_len,
                                       &packet_id, &net_time),
                         -PE_SHORT);
        assert_int_equal(
            tls_wrap_open(ctx, out, 0, plain, sizeof(plain), &plain_len, &packet_id, &net_time),
            -PE_SHORT);
        assert_int_equal(
            tls_wrap_open(ctx, out, need, plain, 13, &plain_len, &packet_id, &net_time),
            -PE_NOSPACE);
    }
    /* NONE opens to a plain copy with no replay fields */
    assert_int_equal(tls_wrap_open(&ctxs[0], in, 14, plain, 14, &plain_len, &packet_id, &net_time),
                     0);
    assert_int_equal(plain_len, 14);
    assert_memory_equal(plain, in, 14);
    assert_int_equal(packet_id, 0);
    assert_int_equal(net_time, 0);
}

static void init_rejects_bad_arguments(void **state)
{
    uint8_t key2[STATIC_KEY_LEN];
    struct tls_wrap_ctx ctx;

    (void)state;
    load_key(&sc_auth01, key2);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_AUTH, key2, 0, "MD5", true), -PE_UNSUPPORTED);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_AUTH, key2, 0, "SHA3-256", true),
                     -PE_UNSUPPORTED);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_AUTH, key2, 0, "", true), -PE_UNSUPPORTED);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_AUTH, key2, 2, NULL, true), -PE_MALFORMED);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_AUTH, key2, -2, NULL, true), -PE_MALFORMED);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_AUTH, NULL, 0, NULL, true), -PE_MALFORMED);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_CRYPT, NULL, 0, NULL, true), -PE_MALFORMED);
    assert_int_equal(tls_wrap_init(&ctx, (enum tls_wrap_mode)7, key2, 0, NULL, true),
                     -PE_MALFORMED);
    assert_int_equal(ctx.mode, TLS_WRAP_NONE); /* wiped on failure */

    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_NONE, NULL, 0, NULL, true), 0);
    assert_int_equal(tls_wrap_overhead(&ctx), 0);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_AUTH, key2, 0, NULL, true), 0);
    assert_int_equal(tls_wrap_overhead(&ctx), 28);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_AUTH, key2, 0, "sha256", true), 0);
    assert_int_equal(tls_wrap_overhead(&ctx), 40);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_AUTH, key2, 1, "SHA512", false), 0);
    assert_int_equal(tls_wrap_overhead(&ctx), TLS_WRAP_MAX_OVERHEAD);
    /* tls-crypt has fixed algorithms and orientation: digest and direction are ignored */
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_CRYPT, key2, 5, "MD5", true), 0);
    assert_int_equal(tls_wrap_overhead(&ctx), 40);
}

static void wipe_zeroes_everything(void **state)
{
    uint8_t key2[STATIC_KEY_LEN];
    struct tls_wrap_ctx ctx;
    const uint8_t *bytes = (const uint8_t *)&ctx;

    (void)state;
    load_key(&sc_crypt, key2);
    assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_CRYPT, key2, -1, NULL, true), 0);
    tls_wrap_wipe(&ctx);
    for (size_t i = 0; i < sizeof(ctx); i++) {
        assert_int_equal(bytes[i], 0);
    }
}

/* Several threads seal and open with the same two contexts at once; every result must be the
 * one a single thread gets. */
struct thread_job {
    const struct tls_wrap_ctx *tx, *rx;
    const uint8_t *expect;
    size_t expect_len;
    int n_bad;
};

static void *thread_main(void *arg)
{
    struct thread_job *job = arg;
    uint8_t plain[MAX_PKT], sealed[MAX_PKT];

    for (int iter = 0; iter < 200; iter++) {
        size_t plain_len, sealed_len;
        uint32_t packet_id, net_time;

        if (tls_wrap_open(job->rx, job->expect, job->expect_len, plain, sizeof(plain), &plain_len,
                          &packet_id, &net_time) != 0 ||
            tls_wrap_seal(job->tx, packet_id, net_time, plain, plain_len, sealed, sizeof(sealed),
                          &sealed_len) != 0 ||
            sealed_len != job->expect_len || memcmp(sealed, job->expect, sealed_len) != 0) {
            job->n_bad++;
        }
    }
    return NULL;
}

static void shared_context_across_threads(void **state)
{
    enum { N_THREADS = 4 };
    const struct wire_vec *v = NULL;
    uint8_t wire[MAX_PKT];
    size_t wire_len;
    struct tls_wrap_ctx tx, rx;
    struct thread_job jobs[N_THREADS];
    pthread_t threads[N_THREADS];

    (void)state;
    for (size_t i = 0; i < N_VECS; i++) {
        if (vecs[i].sc == &sc_crypt && vecs[i].from_server && vecs[i].payload_len > 1000) {
            v = &vecs[i];
        }
    }
    assert_non_null(v);
    wire_len = unhex(v->hex, wire, sizeof(wire));
    init_side(&tx, v->sc, true);
    init_side(&rx, v->sc, false);
    for (int t = 0; t < N_THREADS; t++) {
        jobs[t] = (struct thread_job){&tx, &rx, wire, wire_len, 0};
        assert_int_equal(pthread_create(&threads[t], NULL, thread_main, &jobs[t]), 0);
    }
    for (int t = 0; t < N_THREADS; t++) {
        assert_int_equal(pthread_join(threads[t], NULL), 0);
        assert_int_equal(jobs[t].n_bad, 0);
    }
}

/* dyn-tls-crypt: the key of a session's renegotiations is the exporter's 256 bytes XORed with
 * the session's own wrapping key (none: the exporter's alone), used as a tls-crypt key with the
 * usual directions (2.6 tls_crypt.c tls_session_generate_dynamic_tls_crypt_key). */
static void dyn_key_is_ekm_xor_wrap_key(void **state)
{
    uint8_t ekm[STATIC_KEY_LEN], wk[STATIC_KEY_LEN], other[STATIC_KEY_LEN], x[STATIC_KEY_LEN];
    uint8_t in[64], a[128], b[128], plain[128];
    size_t a_len, b_len, plain_len;
    uint32_t pid, tm;
    struct tls_wrap_ctx srv, cli, ref, bad;

    (void)state;
    for (size_t i = 0; i < STATIC_KEY_LEN; i++) {
        ekm[i] = (uint8_t)(i * 7 + 1);
        wk[i] = (uint8_t)(i * 13 + 5);
        other[i] = (uint8_t)(wk[i] ^ (i == 3 ? 0x01 : 0x00)); /* one bit apart, in a used byte */
        x[i] = ekm[i] ^ wk[i];
    }
    for (size_t i = 0; i < sizeof(in); i++) {
        in[i] = (uint8_t)(0x28 | (i == 0 ? 0x01 : 0x00)) + (uint8_t)i; /* key_id 1 and a body */
    }
    assert_int_equal(tls_wrap_init_dyn(&srv, ekm, wk, true), 0);
    assert_int_equal(tls_wrap_init_dyn(&cli, ekm, wk, false), 0);
    assert_int_equal(tls_wrap_init(&ref, TLS_WRAP_CRYPT, x, -1, NULL, true), 0);
    /* the same packet as a plain tls-crypt context with ekm ^ wk gives */
    assert_int_equal(tls_wrap_seal(&srv, 7, 1700000000u, in, sizeof(in), a, sizeof(a), &a_len), 0);
    assert_int_equal(tls_wrap_seal(&ref, 7, 1700000000u, in, sizeof(in), b, sizeof(b), &b_len), 0);
    assert_int_equal(a_len, b_len);
    assert_memory_equal(a, b, a_len);
    /* the client's side opens it, and the other direction works too */
    assert_int_equal(tls_wrap_open(&cli, a, a_len, plain, sizeof(plain), &plain_len, &pid, &tm), 0);
    assert_int_equal(plain_len, sizeof(in));
    assert_memory_equal(plain, in, sizeof(in));
    assert_int_equal(pid, 7);
    assert_int_equal(tls_wrap_seal(&cli, 8, 1700000001u, in, sizeof(in), b, sizeof(b), &b_len), 0);
    assert_int_equal(tls_wrap_open(&srv, b, b_len, plain, sizeof(plain), &plain_len, &pid, &tm), 0);
    /* a session whose wrapping key differs (another client's Kc) cannot open it */
    assert_int_equal(tls_wrap_init_dyn(&bad, ekm, other, false), 0);
    assert_int_equal(tls_wrap_open(&bad, a, a_len, plain, sizeof(plain), &plain_len, &pid, &tm),
                     -PE_AUTH);
    /* without a wrapping key the exporter's bytes are the key */
    tls_wrap_wipe(&srv);
    tls_wrap_wipe(&ref);
    assert_int_equal(tls_wrap_init_dyn(&srv, ekm, NULL, true), 0);
    assert_int_equal(tls_wrap_init(&ref, TLS_WRAP_CRYPT, ekm, -1, NULL, true), 0);
    assert_int_equal(tls_wrap_seal(&srv, 9, 1700000002u, in, sizeof(in), a, sizeof(a), &a_len), 0);
    assert_int_equal(tls_wrap_seal(&ref, 9, 1700000002u, in, sizeof(in), b, sizeof(b), &b_len), 0);
    assert_memory_equal(a, b, a_len);
    tls_wrap_wipe(&srv);
    tls_wrap_wipe(&cli);
    tls_wrap_wipe(&ref);
    tls_wrap_wipe(&bad);
}

/* A tls-crypt context gives back the key2 bytes it uses, so that a tls-crypt-v2 session (which
 * keeps its Kc only as a context) gets the same dyn-tls-crypt key as from Kc itself: the bytes
 * it leaves zero are unused by any tls-crypt context. */
static void crypt_key2_from_context(void **state)
{
    uint8_t kc[STATIC_KEY_LEN], back[STATIC_KEY_LEN], ekm[STATIC_KEY_LEN];
    uint8_t in[40], a[128], b[128];
    size_t a_len, b_len;
    struct tls_wrap_ctx ctx, d1, d2, auth;

    (void)state;
    for (size_t i = 0; i < STATIC_KEY_LEN; i++) {
        kc[i] = (uint8_t)(i * 31 + 9);
        ekm[i] = (uint8_t)(i * 3 + 200);
    }
    memset(in, 0x29, sizeof(in));
    for (int s = 0; s < 2; s++) {
        assert_int_equal(tls_wrap_init(&ctx, TLS_WRAP_CRYPT, kc, -1, NULL, s == 1), 0);
        assert_int_equal(tls_wrap_crypt_key2(&ctx, s == 1, back), 0);
        assert_int_equal(tls_wrap_init_dyn(&d1, ekm, kc, s == 1), 0);
        assert_int_equal(tls_wrap_init_dyn(&d2, ekm, back, s == 1), 0);
        assert_int_equal(tls_wrap_seal(&d1, 3, 1700000000u, in, sizeof(in), a, sizeof(a), &a_len),
                         0);
        assert_int_equal(tls_wrap_seal(&d2, 3, 1700000000u, in, sizeof(in), b, sizeof(b), &b_len),
                         0);
        assert_int_equal(a_len, b_len);
        assert_memory_equal(a, b, a_len);
        /* only the used bytes came back: the rest of each 64-byte slot is zero */
        assert_memory_equal(back + 32, (uint8_t[32]){0}, 32);
        assert_memory_equal(back, kc, 32);
    }
    assert_int_equal(tls_wrap_init(&auth, TLS_WRAP_AUTH, kc, 0, NULL, true), 0);
    assert_int_equal(tls_wrap_crypt_key2(&auth, true, back), -PE_MALFORMED);
    tls_wrap_wipe(&ctx);
    tls_wrap_wipe(&d1);
    tls_wrap_wipe(&d2);
    tls_wrap_wipe(&auth);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(captured_packets_open),
        cmocka_unit_test(captured_packets_reseal_identically),
        cmocka_unit_test(any_bit_flip_fails_auth),
        cmocka_unit_test(wrong_key_slot_or_digest_fails),
        cmocka_unit_test(crypt_open_matches_openssl),
        cmocka_unit_test(auth_digests_match_openssl),
        cmocka_unit_test(round_trip_in_place_and_empty_body),
        cmocka_unit_test(short_and_nospace),
        cmocka_unit_test(init_rejects_bad_arguments),
        cmocka_unit_test(wipe_zeroes_everything),
        cmocka_unit_test(shared_context_across_threads),
        cmocka_unit_test(dyn_key_is_ekm_xor_wrap_key),
        cmocka_unit_test(crypt_key2_from_context),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
