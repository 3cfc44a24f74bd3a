/** The operator console's words (CONTRACT §13). */

export const en = {
  adminTitle: 'Operator console',
};

export const ru: Record<keyof typeof en, string> = {
  adminTitle: 'Консоль оператора',
};
