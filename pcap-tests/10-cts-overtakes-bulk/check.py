from shared.priority_check import check

check(0x04)
