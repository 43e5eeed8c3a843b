assertThrows(() => {
  structuredClone(() => {});
});
