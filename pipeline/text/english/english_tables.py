"""English tokenizer tables measured from spaCy 3.8 as a black box (tests/spacy_english_facts.py).

Character classes are regex class bodies. SPECIALS are spaCy's special cases, each written as its tokens
joined by a space (the special case is their concatenation); SPECIAL_SPACES are the whitespace ones.
Regenerated, never edited by hand; tests/unit/text/test_english_words.py checks it against spaCy."""

# fmt: off
LOWER = (
    r"\u0061-\u007a\u00df-\u00f6\u00f8-\u00ff\u0101\u0103\u0105\u0107\u0109\u010b\u010d\u010f\u0111\u0113"
    r"\u0115\u0117\u0119\u011b\u011d\u011f\u0121\u0123\u0125\u0127\u0129\u012b\u012d\u012f\u0131\u0133"
    r"\u0135\u0137-\u0138\u013a\u013c\u013e\u0140\u0142\u0144\u0146\u0148-\u0149\u014b\u014d\u014f\u0151"
    r"\u0153\u0155\u0157\u0159\u015b\u015d\u015f\u0161\u0163\u0165\u0167\u0169\u016b\u016d\u016f\u0171"
    r"\u0173\u0175\u0177\u017a\u017c\u017e-\u0180\u0183\u0185\u0188\u018c-\u018d\u0192\u0195\u0199-\u019b"
    r"\u019e\u01a1\u01a3\u01a5\u01a8\u01aa-\u01ab\u01ad\u01b0\u01b4\u01b6\u01b9-\u01ba\u01bd-\u01bf\u01c6"
    r"\u01c9\u01cc\u01ce\u01d0\u01d2\u01d4\u01d6\u01d8\u01da\u01dc-\u01dd\u01df\u01e1\u01e3\u01e5\u01e7"
    r"\u01e9\u01eb\u01ed\u01ef-\u01f0\u01f3\u01f5\u01f9\u01fb\u01fd\u01ff\u0201\u0203\u0205\u0207\u0209"
    r"\u020b\u020d\u020f\u0211\u0213\u0215\u0217\u0219\u021b\u021d\u021f\u0221\u0223\u0225\u0227\u0229"
    r"\u022b\u022d\u022f\u0231\u0233-\u0239\u023c\u023f-\u0240\u0242\u0247\u0249\u024b\u024d\u024f-\u02af"
    r"\u03ac-\u03af\u03b1-\u03c9\u03cc-\u03ce\u0430-\u0451\u0453-\u045a\u045c-\u045d\u0491\u0497\u04a3"
    r"\u04af\u04bb\u04d9\u04e9\u0591-\u05f4\u0620-\u064a\u066e-\u06d5\u06e5-\u06ff\u0750-\u077f\u08a0-"
    r"\u08bd\u0900-\u09ff\u0b80-\u0cff\u0d80-\u0dff\u1100-\u137f\u1d00-\u1d25\u1d6b-\u1d77\u1d79-\u1d9a"
    r"\u1e01\u1e03\u1e05\u1e07\u1e09\u1e0b\u1e0d\u1e0f\u1e11\u1e13\u1e15\u1e17\u1e19\u1e1b\u1e1d\u1e1f"
    r"\u1e21\u1e23\u1e25\u1e27\u1e29\u1e2b\u1e2d\u1e2f\u1e31\u1e33\u1e35\u1e37\u1e39\u1e3b\u1e3d\u1e3f"
    r"\u1e41\u1e43\u1e45\u1e47\u1e49\u1e4b\u1e4d\u1e4f\u1e51\u1e53\u1e55\u1e57\u1e59\u1e5b\u1e5d\u1e5f"
    r"\u1e61\u1e63\u1e65\u1e67\u1e69\u1e6b\u1e6d\u1e6f\u1e71\u1e73\u1e75\u1e77\u1e79\u1e7b\u1e7d\u1e7f"
    r"\u1e81\u1e83\u1e85\u1e87\u1e89\u1e8b\u1e8d\u1e8f\u1e91\u1e93\u1e95-\u1e9d\u1e9f\u1ea1\u1ea3\u1ea5"
    r"\u1ea7\u1ea9\u1eab\u1ead\u1eaf\u1eb1\u1eb3\u1eb5\u1eb7\u1eb9\u1ebb\u1ebd\u1ebf\u1ec1\u1ec3\u1ec5"
    r"\u1ec7\u1ec9\u1ecb\u1ecd\u1ecf\u1ed1\u1ed3\u1ed5\u1ed7\u1ed9\u1edb\u1edd\u1edf\u1ee1\u1ee3\u1ee5"
    r"\u1ee7\u1ee9\u1eeb\u1eed\u1eef\u1ef1\u1ef3\u1ef5\u1ef7\u1ef9\u1efb\u1efd\u1eff\u2c61\u2c65-\u2c66"
    r"\u2c68\u2c6a\u2c6c\u2c71\u2c73-\u2c74\u2c76-\u2c7b\u2e80-\u2fdf\u2ff0-\u30ff\u31c0-\u31ef\u3200-"
    r"\u4dbf\u4e00-\u9fff\ua723\ua725\ua727\ua729\ua72b\ua72d\ua72f-\ua731\ua733\ua735\ua737\ua739\ua73b"
    r"\ua73d\ua73f\ua741\ua743\ua745\ua747\ua749\ua74b\ua74d\ua74f\ua751\ua753\ua755\ua757\ua759\ua75b"
    r"\ua75d\ua75f\ua761\ua763\ua765\ua767\ua769\ua76b\ua76d\ua76f\ua771-\ua778\ua77a\ua77c\ua77f\ua781"
    r"\ua783\ua785\ua787\ua78c\ua78e\ua791\ua793-\ua795\ua797\ua799\ua79b\ua79d\ua79f\ua7a1\ua7a3\ua7a5"
    r"\ua7a7\ua7a9\ua7af\ua7b5\ua7b7\ua7b9\ua7fa\uab30-\uab5a\uab60-\uab64\uac00-\ud7af\uf900-\ufaff\ufb1d"
    r"-\ufbb1\ufbd3-\ufd3d\ufd50-\ufdc7\ufdf0-\ufdfb\ufe30-\ufe4f\ufe70-\ufefc\uff41-\uff5a\U0001ee00-"
    r"\U0001eebb\U0001f200-\U0001f2ff\U00020000-\U0002a6df\U0002a700-\U0002ebef\U0002f800-\U0002fa1f"
)
UPPER = (
    r"\u0041-\u005a\u00c0-\u00d6\u00d8-\u00de\u0100\u0102\u0104\u0106\u0108\u010a\u010c\u010e\u0110\u0112"
    r"\u0114\u0116\u0118\u011a\u011c\u011e\u0120\u0122\u0124\u0126\u0128\u012a\u012c\u012e\u0130\u0132"
    r"\u0134\u0136\u0139\u013b\u013d\u013f\u0141\u0143\u0145\u0147\u014a\u014c\u014e\u0150\u0152\u0154"
    r"\u0156\u0158\u015a\u015c\u015e\u0160\u0162\u0164\u0166\u0168\u016a\u016c\u016e\u0170\u0172\u0174"
    r"\u0176\u0178-\u0179\u017b\u017d\u0181-\u0182\u0184\u0186-\u0187\u0189-\u018b\u018e-\u0191\u0193-"
    r"\u0194\u0196-\u0198\u019c-\u019d\u019f-\u01a0\u01a2\u01a4\u01a6-\u01a7\u01a9\u01ac\u01ae-\u01af"
    r"\u01b1-\u01b3\u01b5\u01b7-\u01b8\u01bc\u01c4\u01c7\u01ca\u01cd\u01cf\u01d1\u01d3\u01d5\u01d7\u01d9"
    r"\u01db\u01de\u01e0\u01e2\u01e4\u01e6\u01e8\u01ea\u01ec\u01ee\u01f1\u01f4\u01f6-\u01f8\u01fa\u01fc"
    r"\u01fe\u0200\u0202\u0204\u0206\u0208\u020a\u020c\u020e\u0210\u0212\u0214\u0216\u0218\u021a\u021c"
    r"\u021e\u0220\u0222\u0224\u0226\u0228\u022a\u022c\u022e\u0230\u0232\u023a-\u023b\u023d-\u023e\u0241"
    r"\u0243-\u0246\u0248\u024a\u024c\u024e\u0386\u0388-\u038a\u038c\u038e-\u038f\u0391-\u03a9\u0400-"
    r"\u0401\u0403-\u040a\u040c-\u040d\u0410-\u042f\u0490\u0496\u04a2\u04ae\u04ba\u04d8\u04e8\u0591-\u05f4"
    r"\u0620-\u064a\u066e-\u06d5\u06e5-\u06ff\u0750-\u077f\u08a0-\u08bd\u0900-\u09ff\u0b80-\u0cff\u0d80-"
    r"\u0dff\u1100-\u137f\u1e00\u1e02\u1e04\u1e06\u1e08\u1e0a\u1e0c\u1e0e\u1e10\u1e12\u1e14\u1e16\u1e18"
    r"\u1e1a\u1e1c\u1e1e\u1e20\u1e22\u1e24\u1e26\u1e28\u1e2a\u1e2c\u1e2e\u1e30\u1e32\u1e34\u1e36\u1e38"
    r"\u1e3a\u1e3c\u1e3e\u1e40\u1e42\u1e44\u1e46\u1e48\u1e4a\u1e4c\u1e4e\u1e50\u1e52\u1e54\u1e56\u1e58"
    r"\u1e5a\u1e5c\u1e5e\u1e60\u1e62\u1e64\u1e66\u1e68\u1e6a\u1e6c\u1e6e\u1e70\u1e72\u1e74\u1e76\u1e78"
    r"\u1e7a\u1e7c\u1e7e\u1e80\u1e82\u1e84\u1e86\u1e88\u1e8a\u1e8c\u1e8e\u1e90\u1e92\u1e94\u1e9e\u1ea0"
    r"\u1ea2\u1ea4\u1ea6\u1ea8\u1eaa\u1eac\u1eae\u1eb0\u1eb2\u1eb4\u1eb6\u1eb8\u1eba\u1ebc\u1ebe\u1ec0"
    r"\u1ec2\u1ec4\u1ec6\u1ec8\u1eca\u1ecc\u1ece\u1ed0\u1ed2\u1ed4\u1ed6\u1ed8\u1eda\u1edc\u1ede\u1ee0"
    r"\u1ee2\u1ee4\u1ee6\u1ee8\u1eea\u1eec\u1eee\u1ef0\u1ef2\u1ef4\u1ef6\u1ef8\u1efa\u1efc\u1efe\u2c60"
    r"\u2c62-\u2c64\u2c67\u2c69\u2c6b\u2c6d-\u2c70\u2c72\u2c75\u2c7e-\u2c7f\u2e80-\u2fdf\u2ff0-\u30ff"
    r"\u31c0-\u31ef\u3200-\u4dbf\u4e00-\u9fff\ua722\ua724\ua726\ua728\ua72a\ua72c\ua72e\ua732\ua734\ua736"
    r"\ua738\ua73a\ua73c\ua73e\ua740\ua742\ua744\ua746\ua748\ua74a\ua74c\ua74e\ua750\ua752\ua754\ua756"
    r"\ua758\ua75a\ua75c\ua75e\ua760\ua762\ua764\ua766\ua768\ua76a\ua76c\ua76e\ua779\ua77b\ua77d-\ua77e"
    r"\ua780\ua782\ua784\ua786\ua78b\ua78d\ua790\ua792\ua796\ua798\ua79a\ua79c\ua79e\ua7a0\ua7a2\ua7a4"
    r"\ua7a6\ua7a8\ua7aa-\ua7ae\ua7b0-\ua7b4\ua7b6\ua7b8\uac00-\ud7af\uf900-\ufaff\ufb1d-\ufbb1\ufbd3-"
    r"\ufd3d\ufd50-\ufdc7\ufdf0-\ufdfb\ufe30-\ufe4f\ufe70-\ufefc\uff21-\uff3a\U0001ee00-\U0001eebb"
    r"\U0001f200-\U0001f2ff\U00020000-\U0002a6df\U0002a700-\U0002ebef\U0002f800-\U0002fa1f"
)
ALPHA = (
    r"\u0041-\u005a\u0061-\u007a\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01bf\u01c4-\u02af\u0386\u0388-\u038a"
    r"\u038c\u038e-\u038f\u0391-\u03a9\u03ac-\u03af\u03b1-\u03c9\u03cc-\u03ce\u0400-\u0401\u0403-\u040a"
    r"\u040c-\u040d\u0410-\u0451\u0453-\u045a\u045c-\u045d\u0490-\u0491\u0496-\u0497\u04a2-\u04a3\u04ae-"
    r"\u04af\u04ba-\u04bb\u04d8-\u04d9\u04e8-\u04e9\u0591-\u05f4\u0620-\u064a\u066e-\u06d5\u06e5-\u06ff"
    r"\u0750-\u077f\u08a0-\u08bd\u0900-\u09ff\u0b80-\u0cff\u0d80-\u0dff\u1100-\u137f\u1d00-\u1d25\u1d6b-"
    r"\u1d77\u1d79-\u1d9a\u1e00-\u1eff\u2c60-\u2c7b\u2c7e-\u2c7f\u2e80-\u2fdf\u2ff0-\u30ff\u31c0-\u31ef"
    r"\u3200-\u4dbf\u4e00-\u9fff\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\ua790-\ua7b9\ua7fa\uab30-\uab5a"
    r"\uab60-\uab64\uac00-\ud7af\uf900-\ufaff\ufb1d-\ufbb1\ufbd3-\ufd3d\ufd50-\ufdc7\ufdf0-\ufdfb\ufe30-"
    r"\ufe4f\ufe70-\ufefc\uff21-\uff3a\uff41-\uff5a\U0001ee00-\U0001eebb\U0001f200-\U0001f2ff\U00020000-"
    r"\U0002a6df\U0002a700-\U0002ebef\U0002f800-\U0002fa1f"
)
QUOTES = (
    r"\u0022\u0027\u002c\u0060\u00ab\u00b4\u00bb\u2018-\u201a\u201c-\u201e\u2329-\u232a\u27e6-\u27e7\uff08"
    r"-\uff09"
)
ICONS = (
    r"\u00a6\u00a9\u00ae\u00b0\u0482\u058d-\u058e\u060e-\u060f\u06de\u06e9\u06fd-\u06fe\u07f6\u09fa\u0b70"
    r"\u0bf3-\u0bf8\u0bfa\u0c7f\u0d4f\u0d79\u0f01-\u0f03\u0f13\u0f15-\u0f17\u0f1a-\u0f1f\u0f34\u0f36\u0f38"
    r"\u0fbe-\u0fc5\u0fc7-\u0fcc\u0fce-\u0fcf\u0fd5-\u0fd8\u109e-\u109f\u1390-\u1399\u1940\u19de-\u19ff"
    r"\u1b61-\u1b6a\u1b74-\u1b7c\u2100-\u2101\u2103-\u2106\u2108-\u2109\u2114\u2116-\u2117\u211e-\u2123"
    r"\u2125\u2127\u2129\u212e\u213a-\u213b\u214a\u214c-\u214d\u214f\u218a-\u218b\u2195-\u2199\u219c-"
    r"\u219f\u21a1-\u21a2\u21a4-\u21a5\u21a7-\u21ad\u21af-\u21cd\u21d0-\u21d1\u21d3\u21d5-\u21f3\u2300-"
    r"\u2307\u230c-\u231f\u2322-\u2328\u232b-\u237b\u237d-\u239a\u23b4-\u23db\u23e2-\u2426\u2440-\u244a"
    r"\u249c-\u24e9\u2500-\u25b6\u25b8-\u25c0\u25c2-\u25f7\u2600-\u266e\u2670-\u2767\u2794-\u27bf\u2800-"
    r"\u28ff\u2b00-\u2b2f\u2b45-\u2b46\u2b4d-\u2b73\u2b76-\u2b95\u2b98-\u2bc8\u2bca-\u2bfe\u2ce5-\u2cea"
    r"\u2e80-\u2e99\u2e9b-\u2ef3\u2f00-\u2fd5\u2ff0-\u2ffb\u3004\u3012-\u3013\u3020\u3036-\u3037\u303e-"
    r"\u303f\u3190-\u3191\u3196-\u319f\u31c0-\u31e3\u3200-\u321e\u322a-\u3247\u3250\u3260-\u327f\u328a-"
    r"\u32b0\u32c0-\u32fe\u3300-\u33ff\u4dc0-\u4dff\ua490-\ua4c6\ua828-\ua82b\ua836-\ua837\ua839\uaa77-"
    r"\uaa79\ufdfd\uffe4\uffe8\uffed-\uffee\ufffc-\ufffd\U00010137-\U0001013f\U00010179-\U00010189"
    r"\U0001018c-\U0001018e\U00010190-\U0001019b\U000101a0\U000101d0-\U000101fc\U00010877-\U00010878"
    r"\U00010ac8\U0001173f\U00016b3c-\U00016b3f\U00016b45\U0001bc9c\U0001d000-\U0001d0f5\U0001d100-"
    r"\U0001d126\U0001d129-\U0001d164\U0001d16a-\U0001d16c\U0001d183-\U0001d184\U0001d18c-\U0001d1a9"
    r"\U0001d1ae-\U0001d1e8\U0001d200-\U0001d241\U0001d245\U0001d300-\U0001d356\U0001d800-\U0001d9ff"
    r"\U0001da37-\U0001da3a\U0001da6d-\U0001da74\U0001da76-\U0001da83\U0001da85-\U0001da86\U0001ecac"
    r"\U0001f000-\U0001f02b\U0001f030-\U0001f093\U0001f0a0-\U0001f0ae\U0001f0b1-\U0001f0bf\U0001f0c1-"
    r"\U0001f0cf\U0001f0d1-\U0001f0f5\U0001f110-\U0001f16b\U0001f170-\U0001f1ac\U0001f1e6-\U0001f202"
    r"\U0001f210-\U0001f23b\U0001f240-\U0001f248\U0001f250-\U0001f251\U0001f260-\U0001f265\U0001f300-"
    r"\U0001f3fa\U0001f400-\U0001f6d4\U0001f6e0-\U0001f6ec\U0001f6f0-\U0001f6f9\U0001f700-\U0001f773"
    r"\U0001f780-\U0001f7d8\U0001f800-\U0001f80b\U0001f810-\U0001f847\U0001f850-\U0001f859\U0001f860-"
    r"\U0001f887\U0001f890-\U0001f8ad\U0001f900-\U0001f90b\U0001f910-\U0001f93e\U0001f940-\U0001f970"
    r"\U0001f973-\U0001f976\U0001f97a\U0001f97c-\U0001f9a2\U0001f9b0-\U0001f9b9\U0001f9c0-\U0001f9c2"
    r"\U0001f9d0-\U0001f9ff\U0001fa60-\U0001fa6d"
)
DOT_AFTER = (
    r"\u0021-\u0023\u0025-\u002d\u0030-\u003c\u003e-\u003f\u005b\u005d\u005f-\u007d\u00a1\u00ab\u00b2"
    r"\u00b4\u00b7\u00bb\u00bf\u00df-\u00f6\u00f8-\u00ff\u0101\u0103\u0105\u0107\u0109\u010b\u010d\u010f"
    r"\u0111\u0113\u0115\u0117\u0119\u011b\u011d\u011f\u0121\u0123\u0125\u0127\u0129\u012b\u012d\u012f"
    r"\u0131\u0133\u0135\u0137-\u0138\u013a\u013c\u013e\u0140\u0142\u0144\u0146\u0148-\u0149\u014b\u014d"
    r"\u014f\u0151\u0153\u0155\u0157\u0159\u015b\u015d\u015f\u0161\u0163\u0165\u0167\u0169\u016b\u016d"
    r"\u016f\u0171\u0173\u0175\u0177\u017a\u017c\u017e-\u0180\u0183\u0185\u0188\u018c-\u018d\u0192\u0195"
    r"\u0199-\u019b\u019e\u01a1\u01a3\u01a5\u01a8\u01aa-\u01ab\u01ad\u01b0\u01b4\u01b6\u01b9-\u01ba\u01bd-"
    r"\u01bf\u01c6\u01c9\u01cc\u01ce\u01d0\u01d2\u01d4\u01d6\u01d8\u01da\u01dc-\u01dd\u01df\u01e1\u01e3"
    r"\u01e5\u01e7\u01e9\u01eb\u01ed\u01ef-\u01f0\u01f3\u01f5\u01f9\u01fb\u01fd\u01ff\u0201\u0203\u0205"
    r"\u0207\u0209\u020b\u020d\u020f\u0211\u0213\u0215\u0217\u0219\u021b\u021d\u021f\u0221\u0223\u0225"
    r"\u0227\u0229\u022b\u022d\u022f\u0231\u0233-\u0239\u023c\u023f-\u0240\u0242\u0247\u0249\u024b\u024d"
    r"\u024f-\u02af\u03ac-\u03af\u03b1-\u03c9\u03cc-\u03ce\u0430-\u0451\u0453-\u045a\u045c-\u045d\u0491"
    r"\u0497\u04a3\u04af\u04bb\u04d9\u04e9\u0591-\u05f4\u060c\u061b\u061f-\u064a\u066a\u066e-\u06d5\u06e5-"
    r"\u06ff\u0750-\u077f\u08a0-\u08bd\u0900-\u09ff\u0b80-\u0cff\u0d80-\u0dff\u1100-\u137f\u1d00-\u1d25"
    r"\u1d6b-\u1d77\u1d79-\u1d9a\u1e01\u1e03\u1e05\u1e07\u1e09\u1e0b\u1e0d\u1e0f\u1e11\u1e13\u1e15\u1e17"
    r"\u1e19\u1e1b\u1e1d\u1e1f\u1e21\u1e23\u1e25\u1e27\u1e29\u1e2b\u1e2d\u1e2f\u1e31\u1e33\u1e35\u1e37"
    r"\u1e39\u1e3b\u1e3d\u1e3f\u1e41\u1e43\u1e45\u1e47\u1e49\u1e4b\u1e4d\u1e4f\u1e51\u1e53\u1e55\u1e57"
    r"\u1e59\u1e5b\u1e5d\u1e5f\u1e61\u1e63\u1e65\u1e67\u1e69\u1e6b\u1e6d\u1e6f\u1e71\u1e73\u1e75\u1e77"
    r"\u1e79\u1e7b\u1e7d\u1e7f\u1e81\u1e83\u1e85\u1e87\u1e89\u1e8b\u1e8d\u1e8f\u1e91\u1e93\u1e95-\u1e9d"
    r"\u1e9f\u1ea1\u1ea3\u1ea5\u1ea7\u1ea9\u1eab\u1ead\u1eaf\u1eb1\u1eb3\u1eb5\u1eb7\u1eb9\u1ebb\u1ebd"
    r"\u1ebf\u1ec1\u1ec3\u1ec5\u1ec7\u1ec9\u1ecb\u1ecd\u1ecf\u1ed1\u1ed3\u1ed5\u1ed7\u1ed9\u1edb\u1edd"
    r"\u1edf\u1ee1\u1ee3\u1ee5\u1ee7\u1ee9\u1eeb\u1eed\u1eef\u1ef1\u1ef3\u1ef5\u1ef7\u1ef9\u1efb\u1efd"
    r"\u1eff\u2018-\u201a\u201c-\u201e\u2026\u2329-\u232a\u27e6-\u27e7\u2c61\u2c65-\u2c66\u2c68\u2c6a"
    r"\u2c6c\u2c71\u2c73-\u2c74\u2c76-\u2c7b\u2e80-\u2fdf\u2ff0-\u30ff\u31c0-\u31ef\u3200-\u4dbf\u4e00-"
    r"\u9fff\ua723\ua725\ua727\ua729\ua72b\ua72d\ua72f-\ua731\ua733\ua735\ua737\ua739\ua73b\ua73d\ua73f"
    r"\ua741\ua743\ua745\ua747\ua749\ua74b\ua74d\ua74f\ua751\ua753\ua755\ua757\ua759\ua75b\ua75d\ua75f"
    r"\ua761\ua763\ua765\ua767\ua769\ua76b\ua76d\ua76f\ua771-\ua778\ua77a\ua77c\ua77f\ua781\ua783\ua785"
    r"\ua787\ua78c\ua78e\ua791\ua793-\ua795\ua797\ua799\ua79b\ua79d\ua79f\ua7a1\ua7a3\ua7a5\ua7a7\ua7a9"
    r"\ua7af\ua7b5\ua7b7\ua7b9\ua7fa\uab30-\uab5a\uab60-\uab64\uac00-\ud7af\uf900-\ufaff\ufb1d-\ufbb1"
    r"\ufbd3-\ufd3d\ufd50-\ufdc7\ufdf0-\ufdfb\ufe30-\ufe4f\ufe70-\ufefc\uff01\uff08-\uff09\uff0c\uff1a-"
    r"\uff1b\uff1f\uff41-\uff5a\uff5e\U0001ee00-\U0001eebb\U0001f200-\U0001f2ff\U00020000-\U0002a6df"
    r"\U0002a700-\U0002ebef\U0002f800-\U0002fa1f"
)
PREFIX_CHARS = (
    r"\u0021-\u002a\u002c\u003a-\u003f\u005b\u005d\u005f-\u0060\u007b\u007d\u00a1\u00a3\u00a5-\u00a7\u00a9"
    r"\u00ab\u00ae\u00b0\u00b4\u00b7\u00bb\u00bf\u0482\u058d-\u058e\u060c\u060e-\u060f\u061b\u061f\u066a"
    r"\u06d4\u06de\u06e9\u06fd-\u06fe\u07f6\u0964\u09fa\u0b70\u0bf3-\u0bf8\u0bfa\u0c7f\u0d4f\u0d79\u0e3f"
    r"\u0f01-\u0f03\u0f13\u0f15-\u0f17\u0f1a-\u0f1f\u0f34\u0f36\u0f38\u0fbe-\u0fc5\u0fc7-\u0fcc\u0fce-"
    r"\u0fcf\u0fd5-\u0fd8\u109e-\u109f\u1390-\u1399\u1940\u19de-\u19ff\u1b61-\u1b6a\u1b74-\u1b7c\u2013-"
    r"\u2014\u2018-\u201a\u201c-\u201e\u2026\u20a0-\u20bf\u2100-\u2101\u2103-\u2106\u2108-\u2109\u2114"
    r"\u2116-\u2117\u211e-\u2123\u2125\u2127\u2129\u212e\u213a-\u213b\u214a\u214c-\u214d\u214f\u218a-"
    r"\u218b\u2195-\u2199\u219c-\u219f\u21a1-\u21a2\u21a4-\u21a5\u21a7-\u21ad\u21af-\u21cd\u21d0-\u21d1"
    r"\u21d3\u21d5-\u21f3\u2300-\u2307\u230c-\u231f\u2322-\u237b\u237d-\u239a\u23b4-\u23db\u23e2-\u2426"
    r"\u2440-\u244a\u249c-\u24e9\u2500-\u25b6\u25b8-\u25c0\u25c2-\u25f7\u2600-\u266e\u2670-\u2767\u2794-"
    r"\u27bf\u27e6-\u27e7\u2800-\u28ff\u2b00-\u2b2f\u2b45-\u2b46\u2b4d-\u2b73\u2b76-\u2b95\u2b98-\u2bc8"
    r"\u2bca-\u2bfe\u2ce5-\u2cea\u2e80-\u2e99\u2e9b-\u2ef3\u2f00-\u2fd5\u2ff0-\u2ffb\u3001-\u3002\u3004"
    r"\u3008-\u3015\u3020\u3036-\u3037\u303e-\u303f\u3190-\u3191\u3196-\u319f\u31c0-\u31e3\u3200-\u321e"
    r"\u322a-\u3247\u3250\u3260-\u327f\u328a-\u32b0\u32c0-\u32fe\u3300-\u33ff\u4dc0-\u4dff\ua490-\ua4c6"
    r"\ua828-\ua82b\ua836-\ua837\ua839\uaa77-\uaa79\ufdfc-\ufdfd\uff01\uff08-\uff09\uff0c\uff1a-\uff1b"
    r"\uff1f\uff5e\uffe4\uffe8\uffed-\uffee\ufffc-\ufffd\U00010137-\U0001013f\U00010179-\U00010189"
    r"\U0001018c-\U0001018e\U00010190-\U0001019b\U000101a0\U000101d0-\U000101fc\U00010877-\U00010878"
    r"\U00010ac8\U0001173f\U00016b3c-\U00016b3f\U00016b45\U0001bc9c\U0001d000-\U0001d0f5\U0001d100-"
    r"\U0001d126\U0001d129-\U0001d164\U0001d16a-\U0001d16c\U0001d183-\U0001d184\U0001d18c-\U0001d1a9"
    r"\U0001d1ae-\U0001d1e8\U0001d200-\U0001d241\U0001d245\U0001d300-\U0001d356\U0001d800-\U0001d9ff"
    r"\U0001da37-\U0001da3a\U0001da6d-\U0001da74\U0001da76-\U0001da83\U0001da85-\U0001da86\U0001ecac"
    r"\U0001f000-\U0001f02b\U0001f030-\U0001f093\U0001f0a0-\U0001f0ae\U0001f0b1-\U0001f0bf\U0001f0c1-"
    r"\U0001f0cf\U0001f0d1-\U0001f0f5\U0001f110-\U0001f16b\U0001f170-\U0001f1ac\U0001f1e6-\U0001f202"
    r"\U0001f210-\U0001f23b\U0001f240-\U0001f248\U0001f250-\U0001f251\U0001f260-\U0001f265\U0001f300-"
    r"\U0001f3fa\U0001f400-\U0001f6d4\U0001f6e0-\U0001f6ec\U0001f6f0-\U0001f6f9\U0001f700-\U0001f773"
    r"\U0001f780-\U0001f7d8\U0001f800-\U0001f80b\U0001f810-\U0001f847\U0001f850-\U0001f859\U0001f860-"
    r"\U0001f887\U0001f890-\U0001f8ad\U0001f900-\U0001f90b\U0001f910-\U0001f93e\U0001f940-\U0001f970"
    r"\U0001f973-\U0001f976\U0001f97a\U0001f97c-\U0001f9a2\U0001f9b0-\U0001f9b9\U0001f9c0-\U0001f9c2"
    r"\U0001f9d0-\U0001f9ff\U0001fa60-\U0001fa6d"
)
SUFFIX_CHARS = (
    r"\u0021-\u0023\u0026-\u002a\u002c\u003a-\u003c\u003e-\u003f\u005b\u005d\u005f-\u0060\u007b\u007d"
    r"\u00a1\u00a6\u00a9\u00ab\u00ae\u00b0\u00b4\u00b7\u00bb\u00bf\u0482\u058d-\u058e\u060c\u060e-\u060f"
    r"\u061b\u061f\u066a\u06d4\u06de\u06e9\u06fd-\u06fe\u07f6\u0964\u09fa\u0b70\u0bf3-\u0bf8\u0bfa\u0c7f"
    r"\u0d4f\u0d79\u0f01-\u0f03\u0f13\u0f15-\u0f17\u0f1a-\u0f1f\u0f34\u0f36\u0f38\u0fbe-\u0fc5\u0fc7-"
    r"\u0fcc\u0fce-\u0fcf\u0fd5-\u0fd8\u109e-\u109f\u1390-\u1399\u1940\u19de-\u19ff\u1b61-\u1b6a\u1b74-"
    r"\u1b7c\u2013-\u2014\u2018-\u201a\u201c-\u201e\u2026\u2100-\u2101\u2103-\u2106\u2108-\u2109\u2114"
    r"\u2116-\u2117\u211e-\u2123\u2125\u2127\u2129\u212e\u213a-\u213b\u214a\u214c-\u214d\u214f\u218a-"
    r"\u218b\u2195-\u2199\u219c-\u219f\u21a1-\u21a2\u21a4-\u21a5\u21a7-\u21ad\u21af-\u21cd\u21d0-\u21d1"
    r"\u21d3\u21d5-\u21f3\u2300-\u2307\u230c-\u231f\u2322-\u237b\u237d-\u239a\u23b4-\u23db\u23e2-\u2426"
    r"\u2440-\u244a\u249c-\u24e9\u2500-\u25b6\u25b8-\u25c0\u25c2-\u25f7\u2600-\u266e\u2670-\u2767\u2794-"
    r"\u27bf\u27e6-\u27e7\u2800-\u28ff\u2b00-\u2b2f\u2b45-\u2b46\u2b4d-\u2b73\u2b76-\u2b95\u2b98-\u2bc8"
    r"\u2bca-\u2bfe\u2ce5-\u2cea\u2e80-\u2e99\u2e9b-\u2ef3\u2f00-\u2fd5\u2ff0-\u2ffb\u3001-\u3002\u3004"
    r"\u3008-\u3015\u3020\u3036-\u3037\u303e-\u303f\u3190-\u3191\u3196-\u319f\u31c0-\u31e3\u3200-\u321e"
    r"\u322a-\u3247\u3250\u3260-\u327f\u328a-\u32b0\u32c0-\u32fe\u3300-\u33ff\u4dc0-\u4dff\ua490-\ua4c6"
    r"\ua828-\ua82b\ua836-\ua837\ua839\uaa77-\uaa79\ufdfd\uff01\uff08-\uff09\uff0c\uff1a-\uff1b\uff1f"
    r"\uff5e\uffe4\uffe8\uffed-\uffee\ufffc-\ufffd\U00010137-\U0001013f\U00010179-\U00010189\U0001018c-"
    r"\U0001018e\U00010190-\U0001019b\U000101a0\U000101d0-\U000101fc\U00010877-\U00010878\U00010ac8"
    r"\U0001173f\U00016b3c-\U00016b3f\U00016b45\U0001bc9c\U0001d000-\U0001d0f5\U0001d100-\U0001d126"
    r"\U0001d129-\U0001d164\U0001d16a-\U0001d16c\U0001d183-\U0001d184\U0001d18c-\U0001d1a9\U0001d1ae-"
    r"\U0001d1e8\U0001d200-\U0001d241\U0001d245\U0001d300-\U0001d356\U0001d800-\U0001d9ff\U0001da37-"
    r"\U0001da3a\U0001da6d-\U0001da74\U0001da76-\U0001da83\U0001da85-\U0001da86\U0001ecac\U0001f000-"
    r"\U0001f02b\U0001f030-\U0001f093\U0001f0a0-\U0001f0ae\U0001f0b1-\U0001f0bf\U0001f0c1-\U0001f0cf"
    r"\U0001f0d1-\U0001f0f5\U0001f110-\U0001f16b\U0001f170-\U0001f1ac\U0001f1e6-\U0001f202\U0001f210-"
    r"\U0001f23b\U0001f240-\U0001f248\U0001f250-\U0001f251\U0001f260-\U0001f265\U0001f300-\U0001f3fa"
    r"\U0001f400-\U0001f6d4\U0001f6e0-\U0001f6ec\U0001f6f0-\U0001f6f9\U0001f700-\U0001f773\U0001f780-"
    r"\U0001f7d8\U0001f800-\U0001f80b\U0001f810-\U0001f847\U0001f850-\U0001f859\U0001f860-\U0001f887"
    r"\U0001f890-\U0001f8ad\U0001f900-\U0001f90b\U0001f910-\U0001f93e\U0001f940-\U0001f970\U0001f973-"
    r"\U0001f976\U0001f97a\U0001f97c-\U0001f9a2\U0001f9b0-\U0001f9b9\U0001f9c0-\U0001f9c2\U0001f9d0-"
    r"\U0001f9ff\U0001fa60-\U0001fa6d"
)
CURRENCY: tuple[str, ...] = (
    '\\$', '£', '€', '¥', '฿', 'US\\$', 'C\\$', 'A\\$', '₽', '﷼', '₴', '₠', '₡', '₢', '₣', '₤', '₥', '₦', '₧',
    '₨', '₩', '₪', '₫', '€', '₭', '₮', '₯', '₰', '₱', '₲', '₳', '₴', '₵', '₶', '₷', '₸', '₹', '₺', '₻', '₼', '₽',
    '₾', '₿',
)
UNITS: tuple[str, ...] = (
    'km', 'km²', 'km³', 'm', 'm²', 'm³', 'dm', 'dm²', 'dm³', 'cm', 'cm²', 'cm³', 'mm', 'mm²', 'mm³', 'ha', 'µm',
    'nm', 'yd', 'in', 'ft', 'kg', 'g', 'mg', 'µg', 't', 'lb', 'oz', 'm/s', 'km/h', 'kmh', 'mph', 'hPa', 'Pa',
    'mbar', 'mb', 'MB', 'kb', 'KB', 'gb', 'GB', 'tb', 'TB', 'T', 'G', 'M', 'K', '%', 'км', 'км²', 'км³', 'м',
    'м²', 'м³', 'дм', 'дм²', 'дм³', 'см', 'см²', 'см³', 'мм', 'мм²', 'мм³', 'нм', 'кг', 'г', 'мг', 'м/с', 'км/ч',
    'кПа', 'Па', 'мбар', 'Кб', 'КБ', 'кб', 'Мб', 'МБ', 'мб', 'Гб', 'ГБ', 'гб', 'Тб', 'ТБ', 'тбكم', 'كم²', 'كم³',
    'م', 'م²', 'م³', 'سم', 'سم²', 'سم³', 'مم', 'مم²', 'مم³', 'كم', 'غرام', 'جرام', 'جم', 'كغ', 'ملغ', 'كوب',
    'اكواب',
)
SENTENCE_END = (
    '!.?։؟۔܀܁܂߹।॥၊။።፧፨᙮᜵᜶᠃᠉᥄᥅᪨᪩᪪᪫᭚᭛᭞᭟᰻᰼᱾᱿‼‽⁇⁈⁉⸮⸼。꓿꘎꘏꛳꛷꡶'
    '꡷꣎꣏꤯꧈꧉꩝꩞꩟꫰꫱꯫﹒﹖﹗！．？｡𐩖𐩗𑁇𑁈𑂾𑂿𑃀𑃁𑅁𑅂𑅃𑇅𑇆𑇍𑇞𑇟𑈸𑈹𑈻𑈼𑊩𑑋𑑌𑗂𑗃𑗉𑗊𑗋𑗌𑗍𑗎'
    '𑗏𑗐𑗑𑗒𑗓𑗔𑗕𑗖𑗗𑙁𑙂𑜼𑜽𑜾𑩂𑩃𑪛𑪜𑱁𑱂𖩮𖩯𖫵𖬷𖬸𖭄𛲟𝪈'
)
SPECIAL_SPACES = (
    '\t\n \xa0'
)
SPECIALS: tuple[str, ...] = (
    "'", "''", "'Cause", "'Cos", "'Coz", "'Cuz", "'S", "'bout", "'cause", "'cos", "'coz", "'cuz", "'d", "'em",
    "'ll", "'nuff", "'re", "'s", '(*_*)', '(-8', '(-:', '(-;', '(-_-)', '(._.)', '(:', '(;', '(=', '(>_<)',
    '(^_^)', '(o:', '(¬_¬)', '(ಠ_ಠ)', '(╯°□°）╯︵┻━┻', ')-:', '):', '-_-', '-__-', '._.', '0.0', '0.o', '0_0',
    '0_o', '10 a.m.', '10 am', '10 p.m.', '10 pm', '11 a.m.', '11 am', '11 p.m.', '11 pm', '12 a.m.', '12 am',
    '12 p.m.', '12 pm', '1 a.m.', '1 am', '1 p.m.', '1 pm', '2 a.m.', '2 am', '2 p.m.', '2 pm', '3 a.m.', '3 am',
    '3 p.m.', '3 pm', '4 a.m.', '4 am', '4 p.m.', '4 pm', '5 a.m.', '5 am', '5 p.m.', '5 pm', '6 a.m.', '6 am',
    '6 p.m.', '6 pm', '7 a.m.', '7 am', '7 p.m.', '7 pm', '8)', '8-)', '8-D', '8D', '8 a.m.', '8 am', '8 p.m.',
    '8 pm', '9 a.m.', '9 am', '9 p.m.', '9 pm', ":'(", ":')", ":'-(", ":'-)", ':(', ':((', ':(((', ':()', ':)',
    ':))', ':)))', ':*', ':-(', ':-((', ':-(((', ':-)', ':-))', ':-)))', ':-*', ':-/', ':-0', ':-3', ':->',
    ':-D', ':-O', ':-P', ':-X', ':-]', ':-o', ':-p', ':-x', ':-|', ':-}', ':/', ':0', ':1', ':3', ':>', ':D',
    ':O', ':P', ':X', ':]', ':o', ':o)', ':p', ':x', ':|', ':}', ':’(', ':’)', ':’-(', ':’-)', ';)', ';-)',
    ';-D', ';D', ';_;', '<.<', '</3', '<3', '<33', '<333', '<space>', '=(', '=)', '=/', '=3', '=D', '=[', '=]',
    '=|', '>.<', '>.>', '>:(', '>:o', '><(((*>', '@_@', 'Adm.', "Ai n't", 'Ai nt', 'Ai n’t', 'Ak.', 'Ala.',
    'Apr.', "Are n't", 'Are nt', 'Are n’t', 'Ariz.', 'Ark.', 'Aug.', 'Bros.', "C'm on", 'C++', 'Calif.',
    "Ca n't", "Ca n't 've", 'Can not', 'Ca nt', 'Ca nt ve', 'Ca n’t', 'Ca n’t ’ve', 'Co.', 'Colo.', 'Conn.',
    'Corp.', "Could 've", "Could n't", "Could n't 've", 'Could nt', 'Could nt ve', 'Could n’t', 'Could n’t ’ve',
    'Could ve', 'Could ’ve', 'C’m on', 'D.C.', "Dare n't", 'Dare nt', 'Dare n’t', 'Dec.', 'Del.', "Did n't",
    "Did n't 've", 'Did nt', 'Did nt ve', 'Did n’t', 'Did n’t ’ve', "Does n't", "Does n't 've", 'Does nt',
    'Does nt ve', 'Does n’t', 'Does n’t ’ve', 'Doin', "Doin'", 'Doin’', "Do n't", "Do n't 've", 'Do nt',
    'Do nt ve', 'Do n’t', 'Do n’t ’ve', 'Dr.', 'E.G.', 'E.g.', 'Feb.', 'Fla.', 'Ga.', 'Gen.', 'Goin', "Goin'",
    'Goin’', 'Gon na', 'Got ta', 'Gov.', "Had n't", "Had n't 've", 'Had nt', 'Had nt ve', 'Had n’t',
    'Had n’t ’ve', "Has n't", 'Has nt', 'Has n’t', "Have n't", 'Have nt', 'Have n’t', 'Havin', "Havin'",
    'Havin’', "He 'd", "He 'd 've", "He 'll", "He 'll 've", "He 's", 'He d', 'He d ve', 'He ll ve', 'He s',
    'He ’d', 'He ’d ’ve', 'He ’ll', 'He ’ll ’ve', 'He ’s', "How 'd", "How 'd 've", "How 'd 'y", "How 'll",
    "How 'll 've", "How 're", "How 's", "How 've", 'How d', 'How d ve', 'How ll', 'How ll ve', 'How re', 'How s',
    'How ve', 'How ’d', 'How ’d ’ve', 'How ’d ’y', 'How ’ll', 'How ’ll ’ve', 'How ’re', 'How ’s', 'How ’ve',
    "I 'd", "I 'd 've", "I 'll", "I 'll 've", "I 'm", "I 'm a", "I 've", 'I.E.', 'I.e.', 'Ia.', 'I d', 'Id.',
    'I d ve', 'Ill.', 'I ll ve', 'I m', 'I m a', 'Inc.', 'Ind.', "Is n't", 'Is nt', 'Is n’t', "It 'd",
    "It 'd 've", "It 'll", "It 'll 've", "It 's", 'It d', 'It d ve', 'It ll', 'It ll ve', 'It ’d', 'It ’d ’ve',
    'It ’ll', 'It ’ll ’ve', 'It ’s', 'I ve', 'I ’d', 'I ’d ’ve', 'I ’ll', 'I ’ll ’ve', 'I ’m', 'I ’m a', 'I ’ve',
    'Jan.', 'Jr.', 'Jul.', 'Jun.', 'Kan.', 'Kans.', 'Ky.', 'La.', "Let 's", 'Let ’s', 'Lovin', "Lovin'",
    'Lovin’', 'Ltd.', "Ma'am", 'Mar.', 'Mass.', "May n't", "May n't 've", 'May nt', 'May nt ve', 'May n’t',
    'May n’t ’ve', 'Ma’am', 'Md.', 'Messrs.', 'Mich.', "Might 've", "Might n't", "Might n't 've", 'Might nt',
    'Might nt ve', 'Might n’t', 'Might n’t ’ve', 'Might ve', 'Might ’ve', 'Minn.', 'Miss.', 'Mo.', 'Mont.',
    'Mr.', 'Mrs.', 'Ms.', 'Mt.', "Must 've", "Must n't", "Must n't 've", 'Must nt', 'Must nt ve', 'Must n’t',
    'Must n’t ’ve', 'Must ve', 'Must ’ve', 'N.C.', 'N.D.', 'N.H.', 'N.J.', 'N.M.', 'N.Y.', 'Neb.', 'Nebr.',
    "Need n't", "Need n't 've", 'Need nt', 'Need nt ve', 'Need n’t', 'Need n’t ’ve', 'Nev.', "Not 've", 'Nothin',
    "Nothin'", 'Nothin’', 'Not ve', 'Not ’ve', 'Nov.', 'Nuthin', "Nuthin'", 'Nuthin’', "O'clock", 'O.O', 'O.o',
    'O_O', 'O_o', 'Oct.', 'Okla.', 'Ol', "Ol'", 'Ol’', 'Ore.', "Ought n't", "Ought n't 've", 'Ought nt',
    'Ought nt ve', 'Ought n’t', 'Ought n’t ’ve', 'O’clock', 'Pa.', 'Ph.D.', 'Prof.', 'Rep.', 'Rev.', 'S.C.',
    'Sen.', 'Sep.', 'Sept.', "Sha n't", "Sha n't 've", 'Sha nt', 'Sha nt ve', 'Sha n’t', 'Sha n’t ’ve', "She 'd",
    "She 'd 've", "She 'll", "She 'll 've", "She 's", 'She d ve', 'She ll ve', 'She s', 'She ’d', 'She ’d ’ve',
    'She ’ll', 'She ’ll ’ve', 'She ’s', "Should 've", "Should n't", "Should n't 've", 'Should nt',
    'Should nt ve', 'Should n’t', 'Should n’t ’ve', 'Should ve', 'Should ’ve', 'Somethin', "Somethin'",
    'Somethin’', 'St.', 'Tenn.', "That 'd", "That 'd 've", "That 'll", "That 'll 've", "That 's", 'That d',
    'That d ve', 'That ll', 'That ll ve', 'That s', 'That ’d', 'That ’d ’ve', 'That ’ll', 'That ’ll ’ve',
    'That ’s', "There 'd", "There 'd 've", "There 'll", "There 'll 've", "There 're", "There 's", "There 've",
    'There d', 'There d ve', 'There ll', 'There ll ve', 'There re', 'There s', 'There ve', 'There ’d',
    'There ’d ’ve', 'There ’ll', 'There ’ll ’ve', 'There ’re', 'There ’s', 'There ’ve', "These 'd",
    "These 'd 've", "These 'll", "These 'll 've", "These 're", "These 've", 'These d', 'These d ve', 'These ll',
    'These ll ve', 'These re', 'These ve', 'These ’d', 'These ’d ’ve', 'These ’ll', 'These ’ll ’ve', 'These ’re',
    'These ’ve', "They 'd", "They 'd 've", "They 'll", "They 'll 've", "They 're", "They 've", 'They d',
    'They d ve', 'They ll', 'They ll ve', 'They re', 'They ve', 'They ’d', 'They ’d ’ve', 'They ’ll',
    'They ’ll ’ve', 'They ’re', 'They ’ve', "This 'd", "This 'd 've", "This 'll", "This 'll 've", "This 's",
    'This d', 'This d ve', 'This ll', 'This ll ve', 'This s', 'This ’d', 'This ’d ’ve', 'This ’ll',
    'This ’ll ’ve', 'This ’s', "Those 'd", "Those 'd 've", "Those 'll", "Those 'll 've", "Those 're",
    "Those 've", 'Those d', 'Those d ve', 'Those ll', 'Those ll ve', 'Those re', 'Those ve', 'Those ’d',
    'Those ’d ’ve', 'Those ’ll', 'Those ’ll ’ve', 'Those ’re', 'Those ’ve', 'V.V', 'V_V', 'Va.', 'Wash.',
    "Was n't", 'Was nt', 'Was n’t', "We 'd", "We 'd 've", "We 'll", "We 'll 've", "We 're", "We 've", 'We d',
    'We d ve', 'We ll ve', "Were n't", 'Were nt', 'Were n’t', 'We ve', 'We ’d', 'We ’d ’ve', 'We ’ll',
    'We ’ll ’ve', 'We ’re', 'We ’ve', "What 'd", "What 'd 've", "What 'll", "What 'll 've", "What 're",
    "What 's", "What 've", 'What d', 'What d ve', 'What ll', 'What ll ve', 'What re', 'What s', 'What ve',
    'What ’d', 'What ’d ’ve', 'What ’ll', 'What ’ll ’ve', 'What ’re', 'What ’s', 'What ’ve', "When 'd",
    "When 'd 've", "When 'll", "When 'll 've", "When 're", "When 's", "When 've", 'When d', 'When d ve',
    'When ll', 'When ll ve', 'When re', 'When s', 'When ve', 'When ’d', 'When ’d ’ve', 'When ’ll',
    'When ’ll ’ve', 'When ’re', 'When ’s', 'When ’ve', "Where 'd", "Where 'd 've", "Where 'll", "Where 'll 've",
    "Where 're", "Where 's", "Where 've", 'Where d', 'Where d ve', 'Where ll', 'Where ll ve', 'Where re',
    'Where s', 'Where ve', 'Where ’d', 'Where ’d ’ve', 'Where ’ll', 'Where ’ll ’ve', 'Where ’re', 'Where ’s',
    'Where ’ve', "Who 'd", "Who 'd 've", "Who 'll", "Who 'll 've", "Who 're", "Who 's", "Who 've", 'Who d',
    'Who d ve', 'Who ll', 'Who ll ve', 'Who s', 'Who ve', 'Who ’d', 'Who ’d ’ve', 'Who ’ll', 'Who ’ll ’ve',
    'Who ’re', 'Who ’s', 'Who ’ve', "Why 'd", "Why 'd 've", "Why 'll", "Why 'll 've", "Why 're", "Why 's",
    "Why 've", 'Why d', 'Why d ve', 'Why ll', 'Why ll ve', 'Why re', 'Why s', 'Why ve', 'Why ’d', 'Why ’d ’ve',
    'Why ’ll', 'Why ’ll ’ve', 'Why ’re', 'Why ’s', 'Why ’ve', 'Wis.', "Wo n't", "Wo n't 've", 'Wo nt',
    'Wo nt ve', 'Wo n’t', 'Wo n’t ’ve', "Would 've", "Would n't", "Would n't 've", 'Would nt', 'Would nt ve',
    'Would n’t', 'Would n’t ’ve', 'Would ve', 'Would ’ve', 'XD', 'XDD', "You 'd", "You 'd 've", "You 'll",
    "You 'll 've", "You 're", "You 've", 'You d', 'You d ve', 'You ll', 'You ll ve', 'You re', 'You ve',
    'You ’d', 'You ’d ’ve', 'You ’ll', 'You ’ll ’ve', 'You ’re', 'You ’ve', '[-:', '[:', '[=', '\\")', '\\n',
    '\\t', ']=', '^_^', '^__^', '^___^', 'a.', 'a.m.', "ai n't", 'ai nt', 'ai n’t', 'and/or', "are n't",
    'are nt', 'are n’t', 'b.', "c'm on", 'c.', "ca n't", "ca n't 've", 'can not', 'ca nt', 'ca nt ve', 'ca n’t',
    'ca n’t ’ve', 'co.', "could 've", "could n't", "could n't 've", 'could nt', 'could nt ve', 'could n’t',
    'could n’t ’ve', 'could ve', 'could ’ve', 'c’m on', 'd.', "dare n't", 'dare nt', 'dare n’t', "did n't",
    "did n't 've", 'did nt', 'did nt ve', 'did n’t', 'did n’t ’ve', "does n't", "does n't 've", 'does nt',
    'does nt ve', 'does n’t', 'does n’t ’ve', 'doin', "doin'", 'doin’', "do n't", "do n't 've", 'do nt',
    'do nt ve', 'do n’t', 'do n’t ’ve', 'e.', 'e.g.', 'em', 'f.', 'g.', 'goin', "goin'", 'goin’', 'gon na',
    'got ta', 'h.', "had n't", "had n't 've", 'had nt', 'had nt ve', 'had n’t', 'had n’t ’ve', "has n't",
    'has nt', 'has n’t', "have n't", 'have nt', 'have n’t', 'havin', "havin'", 'havin’', "he 'd", "he 'd 've",
    "he 'll", "he 'll 've", "he 's", 'he d', 'he d ve', 'he ll ve', 'he s', 'he ’d', 'he ’d ’ve', 'he ’ll',
    'he ’ll ’ve', 'he ’s', "how 'd", "how 'd 've", "how 'd 'y", "how 'll", "how 'll 've", "how 're", "how 's",
    "how 've", 'how d', 'how d ve', 'how ll', 'how ll ve', 'how re', 'how s', 'how ve', 'how ’d', 'how ’d ’ve',
    'how ’d ’y', 'how ’ll', 'how ’ll ’ve', 'how ’re', 'how ’s', 'how ’ve', "i 'd", "i 'd 've", "i 'll",
    "i 'll 've", "i 'm", "i 'm a", "i 've", 'i.', 'i.e.', 'i d', 'i d ve', 'i ll ve', 'i m', 'i m a', "is n't",
    'is nt', 'is n’t', "it 'd", "it 'd 've", "it 'll", "it 'll 've", "it 's", 'it d', 'it d ve', 'it ll',
    'it ll ve', 'it ’d', 'it ’d ’ve', 'it ’ll', 'it ’ll ’ve', 'it ’s', 'i ve', 'i ’d', 'i ’d ’ve', 'i ’ll',
    'i ’ll ’ve', 'i ’m', 'i ’m a', 'i ’ve', 'j.', 'k.', 'l.', "let 's", 'let ’s', 'll', 'lovin', "lovin'",
    'lovin’', 'm.', "ma'am", "may n't", "may n't 've", 'may nt', 'may nt ve', 'may n’t', 'may n’t ’ve', 'ma’am',
    "might 've", "might n't", "might n't 've", 'might nt', 'might nt ve', 'might n’t', 'might n’t ’ve',
    'might ve', 'might ’ve', "must 've", "must n't", "must n't 've", 'must nt', 'must nt ve', 'must n’t',
    'must n’t ’ve', 'must ve', 'must ’ve', 'n.', "need n't", "need n't 've", 'need nt', 'need nt ve', 'need n’t',
    'need n’t ’ve', "not 've", 'nothin', "nothin'", 'nothin’', 'not ve', 'not ’ve', 'nuff', 'nuthin', "nuthin'",
    'nuthin’', "o'clock", 'o.', 'o.0', 'o.O', 'o.o', 'o_0', 'o_O', 'o_o', 'ol', "ol'", 'ol’', "ought n't",
    "ought n't 've", 'ought nt', 'ought nt ve', 'ought n’t', 'ought n’t ’ve', 'o’clock', 'p.', 'p.m.', 'q.',
    'r.', 's.', "sha n't", "sha n't 've", 'sha nt', 'sha nt ve', 'sha n’t', 'sha n’t ’ve', "she 'd",
    "she 'd 've", "she 'll", "she 'll 've", "she 's", 'she d ve', 'she ll ve', 'she s', 'she ’d', 'she ’d ’ve',
    'she ’ll', 'she ’ll ’ve', 'she ’s', "should 've", "should n't", "should n't 've", 'should nt',
    'should nt ve', 'should n’t', 'should n’t ’ve', 'should ve', 'should ’ve', 'somethin', "somethin'",
    'somethin’', 't.', "that 'd", "that 'd 've", "that 'll", "that 'll 've", "that 's", 'that d', 'that d ve',
    'that ll', 'that ll ve', 'that s', 'that ’d', 'that ’d ’ve', 'that ’ll', 'that ’ll ’ve', 'that ’s',
    "there 'd", "there 'd 've", "there 'll", "there 'll 've", "there 're", "there 's", "there 've", 'there d',
    'there d ve', 'there ll', 'there ll ve', 'there re', 'there s', 'there ve', 'there ’d', 'there ’d ’ve',
    'there ’ll', 'there ’ll ’ve', 'there ’re', 'there ’s', 'there ’ve', "these 'd", "these 'd 've", "these 'll",
    "these 'll 've", "these 're", "these 've", 'these d', 'these d ve', 'these ll', 'these ll ve', 'these re',
    'these ve', 'these ’d', 'these ’d ’ve', 'these ’ll', 'these ’ll ’ve', 'these ’re', 'these ’ve', "they 'd",
    "they 'd 've", "they 'll", "they 'll 've", "they 're", "they 've", 'they d', 'they d ve', 'they ll',
    'they ll ve', 'they re', 'they ve', 'they ’d', 'they ’d ’ve', 'they ’ll', 'they ’ll ’ve', 'they ’re',
    'they ’ve', "this 'd", "this 'd 've", "this 'll", "this 'll 've", "this 's", 'this d', 'this d ve',
    'this ll', 'this ll ve', 'this s', 'this ’d', 'this ’d ’ve', 'this ’ll', 'this ’ll ’ve', 'this ’s',
    "those 'd", "those 'd 've", "those 'll", "those 'll 've", "those 're", "those 've", 'those d', 'those d ve',
    'those ll', 'those ll ve', 'those re', 'those ve', 'those ’d', 'those ’d ’ve', 'those ’ll', 'those ’ll ’ve',
    'those ’re', 'those ’ve', 'u.', 'v.', 'v.s.', 'v.v', 'v_v', 'vs.', 'w.', 'w/o', "was n't", 'was nt',
    'was n’t', "we 'd", "we 'd 've", "we 'll", "we 'll 've", "we 're", "we 've", 'we d', 'we d ve', 'we ll ve',
    "were n't", 'were nt', 'were n’t', 'we ve', 'we ’d', 'we ’d ’ve', 'we ’ll', 'we ’ll ’ve', 'we ’re', 'we ’ve',
    "what 'd", "what 'd 've", "what 'll", "what 'll 've", "what 're", "what 's", "what 've", 'what d',
    'what d ve', 'what ll', 'what ll ve', 'what re', 'what s', 'what ve', 'what ’d', 'what ’d ’ve', 'what ’ll',
    'what ’ll ’ve', 'what ’re', 'what ’s', 'what ’ve', "when 'd", "when 'd 've", "when 'll", "when 'll 've",
    "when 're", "when 's", "when 've", 'when d', 'when d ve', 'when ll', 'when ll ve', 'when re', 'when s',
    'when ve', 'when ’d', 'when ’d ’ve', 'when ’ll', 'when ’ll ’ve', 'when ’re', 'when ’s', 'when ’ve',
    "where 'd", "where 'd 've", "where 'll", "where 'll 've", "where 're", "where 's", "where 've", 'where d',
    'where d ve', 'where ll', 'where ll ve', 'where re', 'where s', 'where ve', 'where ’d', 'where ’d ’ve',
    'where ’ll', 'where ’ll ’ve', 'where ’re', 'where ’s', 'where ’ve', "who 'd", "who 'd 've", "who 'll",
    "who 'll 've", "who 're", "who 's", "who 've", 'who d', 'who d ve', 'who ll', 'who ll ve', 'who s', 'who ve',
    'who ’d', 'who ’d ’ve', 'who ’ll', 'who ’ll ’ve', 'who ’re', 'who ’s', 'who ’ve', "why 'd", "why 'd 've",
    "why 'll", "why 'll 've", "why 're", "why 's", "why 've", 'why d', 'why d ve', 'why ll', 'why ll ve',
    'why re', 'why s', 'why ve', 'why ’d', 'why ’d ’ve', 'why ’ll', 'why ’ll ’ve', 'why ’re', 'why ’s',
    'why ’ve', "wo n't", "wo n't 've", 'wo nt', 'wo nt ve', 'wo n’t', 'wo n’t ’ve', "would 've", "would n't",
    "would n't 've", 'would nt', 'would nt ve', 'would n’t', 'would n’t ’ve', 'would ve', 'would ’ve', 'x.',
    'xD', 'xDD', "y' all", 'y.', 'y all', "you 'd", "you 'd 've", "you 'll", "you 'll 've", "you 're", "you 've",
    'you d', 'you d ve', 'you ll', 'you ll ve', 'you re', 'you ve', 'you ’d', 'you ’d ’ve', 'you ’ll',
    'you ’ll ’ve', 'you ’re', 'you ’ve', 'y’ all', 'z.', '¯\\(ツ)/¯', '° C .', '° F .', '° K .', '° c .', '° f .',
    '° k .', 'ä.', 'ö.', 'ü.', 'ಠ_ಠ', 'ಠ︵ಠ', '—', '‘S', '‘s', '’', '’Cause', '’Cos', '’Coz', '’Cuz', '’S',
    '’bout', '’cause', '’cos', '’coz', '’cuz', '’d', '’em', '’ll', '’nuff', '’re', '’s', '’’',
)
# fmt: on
